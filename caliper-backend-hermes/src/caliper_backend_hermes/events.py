"""Reading a finished Hermes session from ``hermes sessions export`` (JSON lines).

Each line is one session: the ``sessions`` row (model, token totals, timestamps) plus its
``messages``. Caliper turns that into a transcript, the skills the model loaded, token usage
and the final answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePath
from typing import Any

import attrs

from caliper.plugin.attempt import InstalledSkill, Turn, Usage

SKILL_VIEW = "skill_view"
FILE_READERS = frozenset({"read_file"})


@attrs.frozen
class Session:
    """The parts of one exported session caliper uses."""

    id: str | None
    model: str | None
    messages: tuple[Mapping[str, Any], ...]
    usage: Usage | None

    @property
    def final_answer(self) -> str | None:
        """The text of the last assistant message, unless that message was a tool call."""
        last = next((m for m in reversed(self.messages) if m.get("role") == "assistant"), None)
        if last is None or last.get("tool_calls"):
            return None
        content = last.get("content")
        return content if isinstance(content, str) and content.strip() else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def session_usage(row: Mapping[str, Any]) -> Usage | None:
    """Token totals of a session row (Hermes' ``input_tokens`` already excludes cache reads)."""
    usage = Usage(
        input_tokens=_int(row.get("input_tokens")),
        output_tokens=_int(row.get("output_tokens")),
        cache_read_tokens=_int(row.get("cache_read_tokens")),
        cache_creation_tokens=_int(row.get("cache_write_tokens")),
    )
    return None if usage.total_tokens is None else usage


def parse_export(text: str, session_id: str | None = None) -> Session | None:
    """The session ``session_id`` (else the most recently started one) from export text."""
    rows: list[Mapping[str, Any]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    if session_id is not None:
        rows = [r for r in rows if r.get("id") == session_id] or rows
    if not rows:
        return None
    row = max(rows, key=lambda r: r.get("started_at") or 0)
    messages = tuple(m for m in row.get("messages") or () if isinstance(m, dict))
    return Session(
        id=row.get("id") if isinstance(row.get("id"), str) else None,
        model=row.get("model") if isinstance(row.get("model"), str) else None,
        messages=messages,
        usage=session_usage(row),
    )


def _arguments(call: Mapping[str, Any]) -> Any:
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    raw = function.get("arguments")
    if isinstance(raw, str):
        try:
            return json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError:
            return raw
    return raw


def _tool_error(output: str | None) -> bool | None:
    if output is None:
        return None
    try:
        data = json.loads(output)
    except json.JSONDecodeError:
        return output.startswith("Tool '") and "does not exist" in output
    if isinstance(data, dict):
        if data.get("success") is False or data.get("error"):
            return True
        code = data.get("exit_code")
        if isinstance(code, int) and code != 0:
            return True
    return False


def _name(value: Any) -> str | None:
    """A tool name as stored, ``None`` when the session holds something else (a name of the
    wrong JSON type is not a tool name: it must not break matching it against known tools)."""
    return value if isinstance(value, str) else None


def transcript(messages: Iterable[Mapping[str, Any]]) -> list[Turn]:
    """Assistant text and tool calls (each paired with its result), in order."""
    turns: list[Turn] = []
    pending: dict[str, int] = {}
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        text = content if isinstance(content, str) else None
        if role == "user":
            turns.append(Turn(role="user", content=text))
        elif role == "assistant":
            if text and text.strip():
                turns.append(Turn(role="assistant", content=text))
            for call in message.get("tool_calls") or ():
                if not isinstance(call, dict):
                    continue
                function = call.get("function") if isinstance(call.get("function"), dict) else {}
                pending[str(call.get("id"))] = len(turns)
                turns.append(
                    Turn(
                        role="tool",
                        tool_name=_name(function.get("name")),
                        tool_input=_arguments(call),
                    )
                )
        elif role == "tool":
            index = pending.pop(str(message.get("tool_call_id")), None)
            if index is None:
                turns.append(
                    Turn(
                        role="tool",
                        tool_name=_name(message.get("tool_name")),
                        tool_output=text,
                        is_error=_tool_error(text),
                    )
                )
            else:
                turns[index] = attrs.evolve(
                    turns[index], tool_output=text, is_error=_tool_error(text)
                )
    return turns


def _names_skill(call_input: Any, skill: InstalledSkill) -> bool:
    if isinstance(call_input, dict):
        name = call_input.get("name")
        return isinstance(name, str) and name.strip() in (skill.name, skill.skill_dir.name)
    return False


def _reads_skill_file(call_input: Any, skill: InstalledSkill) -> bool:
    if not isinstance(call_input, dict):
        return False
    path = call_input.get("path")
    if not isinstance(path, str) or not path.strip():
        return False
    target = PurePath(path.strip())
    if target == PurePath(skill.skill_file):
        return True
    parts = target.parts
    return len(parts) >= 2 and parts[-1] == "SKILL.md" and parts[-2] == skill.skill_dir.name


def activated_skills(turns: Sequence[Turn], skills: Sequence[InstalledSkill]) -> list[str]:
    """Installed skills the model loaded, first load first.

    A load is a ``skill_view`` call naming the skill, or a ``read_file`` of its ``SKILL.md``,
    whose result is not an error: a refused ``skill_view`` (unknown or disabled skill) or a
    failed read loaded nothing.
    """
    found: list[str] = []
    for turn in turns:
        if turn.role != "tool" or turn.is_error is not False:
            continue
        for skill in skills:
            if skill.name in found:
                continue
            if (turn.tool_name == SKILL_VIEW and _names_skill(turn.tool_input, skill)) or (
                turn.tool_name in FILE_READERS and _reads_skill_file(turn.tool_input, skill)
            ):
                found.append(skill.name)
    return found


def _viewed_file(call_input: Any) -> bool:
    """Whether a ``skill_view`` call asks for one of the skill's files, not the skill."""
    return isinstance(call_input, dict) and bool(call_input.get("file_path"))


def undeclared_skills(turns: Sequence[Turn], skills: Sequence[InstalledSkill]) -> list[str]:
    """Skills ``skill_view`` loaded successfully that the spec did not declare, by name."""
    declared = {skill.name for skill in skills} | {skill.skill_dir.name for skill in skills}
    found: list[str] = []
    for turn in turns:
        if turn.role != "tool" or turn.tool_name != SKILL_VIEW or turn.is_error is not False:
            continue
        call_input = turn.tool_input
        if not isinstance(call_input, dict) or _viewed_file(call_input):
            continue
        name = call_input.get("name")
        if isinstance(name, str) and name.strip():
            bare = name.strip().rsplit("/", 1)[-1]
            if bare not in declared and bare not in found:
                found.append(bare)
    return found
