"""Which installed skills the agent activated, read from the commands it ran.

Codex has no skill tool: it lists the skills (name, description, SKILL.md path) to the model,
which "activates" one by reading that skill's SKILL.md with its shell tool. A skill counts as
activated when a command reads *its* installed SKILL.md:

* the command's word is a file reader (``cat``, ``sed``, ``head``, ``nl``, ``rg``, ``grep``…)
  and one of its arguments is that file, or the file is redirected into a command (``< f``);
* paths are compared after expanding ``~``, ``$HOME`` and ``$CODEX_HOME``, resolving relative
  paths against the command's working directory (``cd`` inside the command is followed) and
  resolving ``..`` and symlinks.

Listing the skills root, reading another file of the skill, reading another skill's SKILL.md
or a path that only shares a prefix (``skills/foo-extra/SKILL.md`` for skill ``foo``) is not
an activation (the matching is the core's, :mod:`caliper.plugin.skill_reads`). Commands arrive as
Codex prints them (``/bin/bash -lc '<script>'``).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from pathlib import PurePosixPath

READERS = frozenset(
    {
        "cat", "tac", "head", "tail", "sed", "awk", "gawk", "mawk", "nl", "less", "more",
        "bat", "batcat", "view", "rg", "grep", "egrep", "fgrep", "cut", "strings", "od",
        "xxd", "hexdump", "Get-Content", "gc",
    }
)  # fmt: skip
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "pwsh", "powershell"})
WRAPPERS = frozenset({"sudo", "command", "env", "time", "nice", "nohup", "exec", "builtin"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_VARIABLE = re.compile(r"\$(?:\{(HOME|CODEX_HOME|PWD)\}|(HOME|CODEX_HOME|PWD)\b)")


def shell_script(command: str | Sequence[str]) -> str:
    """The script a ``/bin/bash -lc '<script>'`` command runs (the command itself otherwise)."""
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError:
            return command
    else:
        argv = list(command)
    if (
        len(argv) >= 3
        and PurePosixPath(argv[0]).name in SHELLS
        and argv[1].startswith("-")
        and "c" in argv[1].lower()
    ):
        return argv[2]
    return command if isinstance(command, str) else shlex.join(argv)


_OPERATOR_CHARS = ";&|()<>\n"


def _tokens(script: str) -> list[str]:
    lexer = shlex.shlex(script, posix=True, punctuation_chars=_OPERATOR_CHARS)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # unbalanced quotes: fall back to whitespace
        return script.split()


def _is_operator(token: str) -> bool:
    return bool(token) and all(char in _OPERATOR_CHARS for char in token)


def segments(script: str) -> list[list[str]]:
    """Simple commands of a script, split at ``;``, ``&&``, ``||``, ``|``, ``&`` and newlines.

    Redirections stay inside their command as ``<``/``>`` tokens followed by the target.
    """
    result: list[list[str]] = []
    current: list[str] = []
    for token in _tokens(script):
        if _is_operator(token) and not ("<" in token or ">" in token):
            if current:
                result.append(current)
            current = []
        elif _is_operator(token):
            current.append(token.strip("\n"))
        else:
            current.append(token)
    if current:
        result.append(current)
    return result


class _Resolver:
    """Turns path-like tokens into normalised absolute paths."""

    def __init__(self, home: str | None, codex_home: str | None) -> None:
        self.values = {"HOME": home, "CODEX_HOME": codex_home}

    def expand(self, token: str, cwd: str) -> str | None:
        def substitute(match: re.Match[str]) -> str:
            name = match.group(1) or match.group(2)
            value = cwd if name == "PWD" else self.values.get(name)
            return value if value else match.group(0)

        text = _VARIABLE.sub(substitute, token)
        if text == "~" or text.startswith("~/"):
            if not self.values["HOME"]:
                return None
            text = self.values["HOME"] + text[1:]
        if "$" in text or not text:
            return None
        if not text.startswith("/"):
            text = os.path.join(cwd, text)
        return os.path.realpath(text)


def _command_word(tokens: list[str]) -> tuple[str | None, list[str]]:
    rest = list(tokens)
    while rest and (_ASSIGNMENT.match(rest[0]) or rest[0] in WRAPPERS):
        rest.pop(0)
    if not rest:
        return None, []
    return PurePosixPath(rest[0]).name, rest[1:]


def read_files(
    command: str | Sequence[str],
    *,
    cwd: str,
    home: str | None = None,
    codex_home: str | None = None,
) -> list[str]:
    """Absolute paths of the files ``command`` reads with a reader or an input redirection."""
    resolver = _Resolver(home, codex_home)
    here = os.path.realpath(cwd)
    found: list[str] = []
    for tokens in segments(shell_script(command)):
        word, args = _command_word(tokens)
        if word == "cd":
            target = args[0] if args else (home or here)
            moved = resolver.expand(target, here)
            here = moved or here
            continue
        index = 0
        while index < len(args):
            token = args[index]
            if token in ("<", "<<<") and index + 1 < len(args):
                if token == "<":
                    path = resolver.expand(args[index + 1], here)
                    if path:
                        found.append(path)
                index += 2
                continue
            if ">" in token and _is_operator(token):
                index += 2
                continue
            if word in READERS:
                value = token.split("=", 1)[1] if token.startswith("-") and "=" in token else token
                if value and not value.startswith("-"):
                    path = resolver.expand(value, here)
                    if path:
                        found.append(path)
            index += 1
    return found
