"""Which installed skills the pi agent chose to load.

pi has no skill tool: its system prompt lists each skill's ``SKILL.md`` path and tells the
model to read the file when the task matches. A skill counts as activated when the agent
reads exactly that skill's ``SKILL.md``, either with the ``read`` tool or with a shell
command that prints it (``cat``, ``head``, ``sed``…). Reading another file of the skill, the
skills folder, or another skill's file is not activation of this one. Paths are resolved the
way pi resolves them: a leading ``@`` is dropped, ``~`` (and, in shell commands, ``$HOME`` or
``$PI_CODING_AGENT_DIR``) is expanded, and relative paths start at the working directory. A
call that failed, or that never got a result, does not count.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from caliper.plugin.attempt import InstalledSkill
from caliper.plugin.skill_reads import activated_by_reads, undeclared_reads
from caliper_backend_pi.events import ToolCall

READ_TOOL = "read"
SHELL_TOOL = "bash"
FILE_PRINTERS = frozenset(
    {"cat", "head", "tail", "less", "more", "sed", "awk", "nl", "bat", "batcat", "tac"}
)
"""Commands whose file arguments count as reading the file."""

_SEPARATORS = re.compile(r"\|\||&&|[;|&\n]")


def _normal(path: str) -> str:
    return os.path.normpath(path)


def _shell_variables(home: Path) -> dict[str, str]:
    """Variables an agent's shell command may use to reach the skills (as set for pi)."""
    return {"HOME": str(home), "PI_CODING_AGENT_DIR": str(home / ".pi" / "agent")}


def resolve_path(raw: str, *, cwd: Path, home: Path) -> str:
    """An agent-supplied path as pi would resolve it, normalised (no symlinks followed)."""
    path = raw.strip()
    if path.startswith("@"):
        path = path[1:]
    if path == "~":
        path = str(home)
    elif path.startswith("~/"):
        path = str(home) + path[1:]
    else:
        for variable, value in _shell_variables(home).items():
            for spelling in (f"${variable}", f"${{{variable}}}"):
                if path == spelling or path.startswith(spelling + "/"):
                    path = value + path[len(spelling) :]
    if not os.path.isabs(path):
        path = os.path.join(str(cwd), path)
    return _normal(path)


def _shell_paths(command: str, *, cwd: Path, home: Path) -> list[str]:
    """File arguments of the printing commands in a shell command line, resolved.

    A ``cd DIR`` earlier in the same command line moves where later relative paths start.
    """
    paths = []
    here = cwd
    for segment in _SEPARATORS.split(command):
        try:
            words = shlex.split(segment, comments=False)
        except ValueError:
            words = segment.split()
        while words and "=" in words[0] and not words[0].startswith(("/", ".", "~")):
            words = words[1:]  # leading VAR=value assignments
        if len(words) == 2 and words[0] == "cd":
            here = Path(resolve_path(words[1], cwd=here, home=home))
            continue
        if not words or os.path.basename(words[0]) not in FILE_PRINTERS:
            continue
        raw = [w for w in words[1:] if not w.startswith("-") and w != "<"]
        raw += [w[1:] for w in words[1:] if w.startswith("<") and len(w) > 1]
        paths.extend(resolve_path(w, cwd=here, home=home) for w in raw)
    return paths


def _read_paths(call: ToolCall, *, cwd: Path, home: Path) -> list[str]:
    """The resolved paths a tool call read."""
    arguments: Any = call.arguments
    if not isinstance(arguments, dict):
        return []
    if call.name == READ_TOOL:
        path = arguments.get("path") or arguments.get("file_path")
        return [resolve_path(path, cwd=cwd, home=home)] if isinstance(path, str) else []
    if call.name == SHELL_TOOL:
        command = arguments.get("command")
        return _shell_paths(command, cwd=cwd, home=home) if isinstance(command, str) else []
    return []


def succeeded(call: ToolCall) -> bool:
    """Whether pi's tool answered the call without an error (no answer: not a success)."""
    if call.is_error is None:
        return call.output is not None
    return not call.is_error


def successful_reads(calls: Sequence[ToolCall], *, cwd: Path, home: Path) -> list[str]:
    """The resolved paths every successful call read, in order."""
    return [p for call in calls if succeeded(call) for p in _read_paths(call, cwd=cwd, home=home)]


def activated_skills(
    calls: Sequence[ToolCall], skills: Sequence[InstalledSkill], *, cwd: Path, home: Path
) -> list[str]:
    """Names of installed skills whose ``SKILL.md`` the agent read, in first-read order."""
    return activated_by_reads(successful_reads(calls, cwd=cwd, home=home), skills)


def undeclared_skills(
    calls: Sequence[ToolCall],
    skills: Sequence[InstalledSkill],
    *,
    cwd: Path,
    home: Path,
    skills_root: Path,
) -> list[str]:
    """``SKILL.md`` files under ``skills_root`` read successfully that no declared skill owns,
    by frontmatter name (see :func:`caliper.plugin.skill_reads.undeclared_reads`)."""
    return undeclared_reads(successful_reads(calls, cwd=cwd, home=home), skills, skills_root)
