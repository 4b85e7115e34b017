"""Facts only Codex's session file has: the concrete model and each command's directory.

``codex exec`` records every session in ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-
<thread id>.jsonl``. Its ``turn_context`` lines name the model the turn ran with (also when
the user's config chose it), and its completed ``CommandExecution`` items carry the command
as argv plus the directory it ran in, which the ``--json`` stream leaves out (a command run
with ``workdir`` set shows up there as a bare ``cat SKILL.md``). The format is internal to
Codex, so everything here is optional: when it cannot be read, callers fall back to the
``--json`` stream alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import attrs

MAX_BYTES = 64 * 1024 * 1024


@attrs.frozen
class RolloutCommand:
    """A shell command Codex ran, as argv, with its working directory and whether it failed.

    ``failed`` is true for status ``failed`` or a non-zero exit code: what such a command
    read is not counted as a skill load.
    """

    argv: tuple[str, ...]
    cwd: str | None
    failed: bool = False


@attrs.define
class Rollout:
    """What the session file told us."""

    model: str | None = None
    commands: list[RolloutCommand] = attrs.field(factory=list)


def find_rollout(codex_home: Path, thread_id: str | None) -> Path | None:
    """The session file of ``thread_id`` (``None`` when absent or the id is unknown)."""
    if not thread_id or "/" in thread_id:
        return None
    sessions = codex_home / "sessions"
    if not sessions.is_dir():
        return None
    matches = sorted(sessions.glob(f"*/*/*/rollout-*-{thread_id}.jsonl"))
    return matches[-1] if matches else None


def _cwd(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    if value.startswith("file://"):
        return unquote(urlparse(value).path)
    return value


def _command(payload: Mapping[str, Any]) -> RolloutCommand | None:
    item = payload.get("item")
    if payload.get("type") != "item_completed" or not isinstance(item, Mapping):
        return None
    if item.get("type") != "CommandExecution":
        return None
    argv = item.get("command")
    if isinstance(argv, str):
        argv = [argv]
    if not isinstance(argv, Sequence) or not all(isinstance(a, str) for a in argv):
        return None
    code = item.get("exit_code")
    failed = item.get("status") == "failed" or (isinstance(code, int) and code != 0)
    return RolloutCommand(tuple(argv), _cwd(item.get("cwd")), failed)


def read_rollout(path: Path | None) -> Rollout:
    """Parse a session file; unknown lines are skipped, a missing file gives empty facts."""
    facts = Rollout()
    if path is None:
        return facts
    try:
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            text = handle.read(MAX_BYTES)
    except OSError:
        return facts
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(entry, Mapping) or not isinstance(entry.get("payload"), Mapping):
            continue
        payload = entry["payload"]
        if entry.get("type") == "turn_context" and isinstance(payload.get("model"), str):
            facts.model = payload["model"]
        elif entry.get("type") == "event_msg":
            command = _command(payload)
            if command is not None:
                facts.commands.append(command)
    return facts
