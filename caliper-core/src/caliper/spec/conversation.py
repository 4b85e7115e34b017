"""Read and check a task's ``history:`` file (the planted conversation, see ``docs/spec.md``).

The file is YAML with one key, ``turns:``, a list whose items each have exactly one key:
``user: TEXT``, ``assistant: TEXT`` or ``shell: {command, output, exit_code}``. Every problem
becomes a :class:`~caliper.spec.problems.Problem` at its line and column in the history file;
a file that cannot be read at all is reported at the spec's ``history:`` value instead.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caliper.plugin.conversation import (
    AssistantTurn,
    ConversationTurn,
    PlantedConversation,
    ShellTurn,
    UserTurn,
)

if TYPE_CHECKING:
    from collections.abc import Collection, Sequence

    from caliper.spec.model import Task
import re

from caliper.spec.fields import Reporter, did_you_mean, type_name
from caliper.spec.problems import Problem
from caliper.spec.yamldoc import decode_text, parse_yaml

MAX_CONVERSATION_BYTES = 1024 * 1024
"""A history file larger than this (1 MiB) is refused: it would not fit a context window."""
MAX_TURNS = 1000
TURN_KINDS = ("user", "assistant", "shell")
SHELL_KEYS = ("command", "output", "exit_code")


def load_conversation(
    declared: str, spec_dir: Path
) -> tuple[PlantedConversation | None, str | None, list[Problem]]:
    """Read ``declared`` (relative to ``spec_dir``) and check it.

    Returns ``(conversation, None, [])`` when it is fine; otherwise ``(None, reason, [])`` when the
    file cannot be read at all (the caller reports ``reason`` at the spec's ``history:``), or
    ``(None, None, problems)`` for problems inside the file.
    """
    shown = Path(declared).expanduser()
    if not shown.is_absolute():
        shown = Path(os.path.normpath(spec_dir / shown))
    path = Path(os.path.abspath(shown))
    raw, reason = _read_bytes(path)
    if raw is None:
        return None, reason, []
    text, problems = decode_text(shown, raw, what="history")
    if text is None:
        return None, None, problems
    document, problems = parse_yaml(shown, text)
    if document is None or problems:
        return None, None, problems
    report = Reporter(document)
    turns = check_document(report, document.data)
    if report.problems or turns is None:
        return None, None, report.problems
    sha256 = hashlib.sha256(raw).hexdigest()
    return (
        PlantedConversation(path=path, declared_as=declared, sha256=sha256, turns=turns),
        None,
        [],
    )


def _read_bytes(path: Path) -> tuple[bytes | None, str | None]:
    """The file's bytes, or why it cannot be a history file (missing, not regular, too big)."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None, f"no such file: {path} (paths are relative to the spec's folder)"
    except OSError as exc:
        return None, f"cannot read {path}: {exc.strerror or exc}"
    if stat.S_ISDIR(info.st_mode):
        return None, f"{path} is a directory; expected a history file (YAML)"
    if not stat.S_ISREG(info.st_mode):
        return None, f"{path} is not a regular file; expected a history file (YAML)"
    if info.st_size > MAX_CONVERSATION_BYTES:
        return None, (
            f"{path} is {info.st_size} bytes; a history file may be at most "
            f"{MAX_CONVERSATION_BYTES} bytes (1 MiB). Keep only the turns the task needs."
        )
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_CONVERSATION_BYTES + 1)
    except OSError as exc:
        return None, f"cannot read {path}: {exc.strerror or exc}"
    if len(raw) > MAX_CONVERSATION_BYTES:
        return None, f"{path} grew past {MAX_CONVERSATION_BYTES} bytes while it was read"
    return raw, None


def check_document(report: Reporter, data: Any) -> tuple[ConversationTurn, ...] | None:
    """The turns of a parsed history file, or ``None`` (problems are in ``report``)."""
    if data is None:
        report.problems.append(
            Problem(
                report.document.path,
                1,
                1,
                "",
                "the history file is empty; it needs `turns:` (see docs/spec.md)",
            )
        )
        return None
    if isinstance(data, list):
        report.error(
            (),
            "expected a mapping with `turns:`, found a list: this is the history format of the "
            "earlier caliper-eval (0.21 and before). Convert it with `caliper migrate SPEC` "
            "(see docs/migration.md)",
        )
        return None
    if not isinstance(data, dict):
        report.error((), f"expected a mapping with `turns:`, found {type_name(data)}")
        return None
    report.unknown_keys((), data, ("turns",), what="a history file")
    value = data.get("turns")
    if not isinstance(value, list) or not value:
        found = "nothing" if "turns" not in data else type_name(value)
        report.error(
            ("turns",) if "turns" in data else (),
            f"expected `turns:` to be a non-empty list of turns, found {found}",
        )
        return None
    if len(value) > MAX_TURNS:
        report.error(("turns",), f"{len(value)} turns; a history may have at most {MAX_TURNS}")
        return None
    turns: list[ConversationTurn | None] = [
        _turn(report, ("turns", index), item) for index, item in enumerate(value)
    ]
    if any(turn is None for turn in turns):
        return None
    checked = tuple(t for t in turns if t is not None)
    _check_order(report, checked)
    return checked


def _turn(report: Reporter, path: tuple[Any, ...], item: Any) -> ConversationTurn | None:
    """One turn, or ``None`` with its problems reported."""
    kinds = "`user:`, `assistant:` or `shell:`"
    if not isinstance(item, dict) or len(item) != 1:
        what = type_name(item) if not isinstance(item, dict) else f"{len(item)} keys"
        report.error(path, f"each turn has exactly one key, {kinds}; found {what}")
        return None
    ((kind, value),) = item.items()
    if kind not in TURN_KINDS:
        report.error(
            (*path, kind),
            f"unknown turn {kind!r}.{did_you_mean(kind, TURN_KINDS)} Expected {kinds}.",
            key=True,
        )
        return None
    if kind in ("user", "assistant"):
        text = report.string((*path, kind), value, what=f"the {kind}'s text")
        if text is None:
            return None
        return UserTurn(text) if kind == "user" else AssistantTurn(text)
    return _shell(report, (*path, "shell"), value)


def _shell(report: Reporter, path: tuple[Any, ...], value: Any) -> ShellTurn | None:
    if not isinstance(value, dict):
        report.error(
            path, f"expected a mapping with `command:` and `output:`, found {type_name(value)}"
        )
        return None
    before = len(report.problems)
    report.unknown_keys(path, value, SHELL_KEYS, what="a shell turn")
    command = None
    if "command" not in value:
        report.error(path, "a shell turn needs `command:` (the command the assistant ran)")
    else:
        command = report.string((*path, "command"), value["command"], what="a shell command")
    output = value.get("output", "")
    if output is None:
        output = ""
    if not isinstance(output, str):
        report.error(
            (*path, "output"),
            f"expected the command's output (a string), found {type_name(output)}",
        )
    exit_code = value.get("exit_code", 0)
    if isinstance(exit_code, bool) or not isinstance(exit_code, int) or not 0 <= exit_code <= 255:
        report.error(
            (*path, "exit_code"), f"expected an exit status from 0 to 255, found {exit_code!r}"
        )
    if len(report.problems) != before or command is None:
        return None
    return ShellTurn(command=command, output=output, exit_code=exit_code)


def _check_order(report: Reporter, turns: tuple[ConversationTurn, ...]) -> None:
    """A conversation starts with the user, never has the user speak twice in a row, and
    ends with the assistant (the task's prompt is the next user turn)."""
    if not isinstance(turns[0], UserTurn):
        report.error(
            ("turns", 0), "the first turn must be `user:` (a conversation starts with the user)"
        )
    for index in range(1, len(turns)):
        if isinstance(turns[index], UserTurn) and isinstance(turns[index - 1], UserTurn):
            report.error(
                ("turns", index),
                "two `user:` turns in a row; merge them into one (the assistant answers "
                "between user turns)",
            )
    if isinstance(turns[-1], UserTurn):
        report.error(
            ("turns", len(turns) - 1),
            "the history must end with an `assistant:` or `shell:` turn: the task's "
            "`prompt:` is the next user turn",
        )


def slash_command_warnings(
    tasks: Sequence[Task], skill_names: Collection[str]
) -> list[tuple[tuple[Any, ...], str]]:
    """A warning per history file with a ``user:`` turn that is ``/NAME``, NAME a declared
    skill: such a turn is sent as plain text here, where the earlier caliper-eval expanded
    it into the skill's instructions. Each is ``(the task's history: field, message)``."""
    found: list[tuple[tuple[Any, ...], str]] = []
    seen: set[Path] = set()
    for task in tasks:
        conversation = task.conversation
        if conversation is None or conversation.path in seen:
            continue
        seen.add(conversation.path)
        for number, turn in enumerate(conversation.turns, 1):
            if not isinstance(turn, UserTurn):
                continue
            match = re.fullmatch(r"/([A-Za-z0-9_.-]+)(?:\s.*)?", turn.text.strip(), re.DOTALL)
            if match is None or match[1] not in skill_names:
                continue
            found.append(
                (
                    ("tasks", task.index, "history"),
                    f"turn {number} of {conversation.declared_as} is `/{match[1]}`, a skill this "
                    "spec declares: it reaches the model as plain text (a history turn is never "
                    "expanded into a skill, as the earlier caliper-eval did). To plant the "
                    "skill's instructions, write them into the turn (`caliper migrate` does it "
                    "for a file in the earlier format)",
                )
            )
    return found
