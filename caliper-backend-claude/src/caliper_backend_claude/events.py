"""Reading ``claude -p --output-format stream-json --verbose`` output.

The CLI prints one JSON object per line: a ``system``/``init`` line, ``assistant`` lines (one
per content block, so a reply with text and a tool call arrives as two lines sharing a message
id), ``user`` lines carrying tool results, and a final ``result`` line holding the answer, the
summed usage and the error fields. Parsing is lenient: unknown keys and event types are
ignored, lines that are not JSON are counted, never fatal. A field caliper reads that holds
the wrong JSON type (a list where a string is expected…) is left out and described in
:attr:`ClaudeStream.unreadable`, and so is an event that could not be read at all, so the
attempt can say what the CLI sent instead of failing on it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from caliper.plugin.attempt import Turn, Usage

SKILL_TOOL = "Skill"
SYNTHETIC_MODEL = "<synthetic>"
_CONTEXT_SUFFIX = re.compile(r"\[[^\]]*\]$")


@attrs.define
class SkillCall:
    """One ``Skill`` tool call: the skill it named and whether Claude Code loaded it.

    ``succeeded`` is ``None`` until the call's tool result arrives, then ``not is_error``: a
    refused load (an unknown skill, or one with ``disable-model-invocation: true``) is
    ``False``.
    """

    skill: str
    tool_use_id: str | None = None
    succeeded: bool | None = None


@attrs.define
class ClaudeStream:
    """What one run printed, folded into the pieces caliper needs."""

    init: Mapping[str, Any] | None = None
    result: Mapping[str, Any] | None = None
    turns: list[Turn] = attrs.field(factory=list)
    skill_calls: list[SkillCall] = attrs.field(factory=list)
    assistant_errors: list[str] = attrs.field(factory=list)
    retries: list[Mapping[str, Any]] = attrs.field(factory=list)
    models: list[str] = attrs.field(factory=list)
    events: int = 0
    unparsed_lines: int = 0
    unreadable: list[str] = attrs.field(factory=list)
    """What the CLI sent that could not be read: a field of the wrong JSON type, or an event
    that failed to parse (each described with the value it held)."""

    @property
    def finished(self) -> bool:
        """True when the CLI got as far as printing its ``result`` line."""
        return self.result is not None

    @property
    def model(self) -> str | None:
        """The concrete model: the last real assistant message's, else the init line's."""
        if self.models:
            return self.models[-1]
        if self.init and isinstance(self.init.get("model"), str):
            return _CONTEXT_SUFFIX.sub("", self.init["model"]) or None
        return None

    @property
    def final_answer(self) -> str | None:
        """The ``result`` text of a run that did not end in error."""
        if not self.result or self.result.get("is_error"):
            return None
        text = self.result.get("result")
        return text if isinstance(text, str) else None

    @property
    def usage(self) -> Usage | None:
        """Token usage from the ``result`` line (assistant lines only carry partial counts),
        with the ``total_cost_usd`` Claude Code reports there."""
        if not self.result:
            return None
        usage = usage_from(self.result.get("usage"))
        cost = self.result.get("total_cost_usd")
        if usage is None or not isinstance(cost, (int, float)) or isinstance(cost, bool):
            return usage
        return attrs.evolve(usage, cost_usd=float(cost)) if math.isfinite(cost) else usage


def usage_from(data: Any) -> Usage | None:
    """Anthropic usage (input excludes cache) mapped onto caliper's four disjoint parts."""
    if not isinstance(data, Mapping):
        return None

    def count(key: str) -> int | None:
        value = data.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    usage = Usage(
        input_tokens=count("input_tokens"),
        output_tokens=count("output_tokens"),
        cache_read_tokens=count("cache_read_input_tokens"),
        cache_creation_tokens=count("cache_creation_input_tokens"),
    )
    return None if usage.total_tokens is None else usage


def _text_of(content: Any) -> str | None:
    """Tool-result content (a string or a list of blocks) as plain text."""
    if content is None:
        return None
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = []
        for block in content:
            if isinstance(block, Mapping):
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type"):
                    parts.append(f"[{block['type']}]")
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False)


_KINDS: dict[type, str] = {
    str: "a string",
    bool: "true or false",
    int: "a number",
    list: "a list",
    Mapping: "an object",
}
RESULT_FIELDS: dict[str, type] = {
    "subtype": str,
    "terminal_reason": str,
    "api_error_status": int,
    "is_error": bool,
    "result": str,
    "errors": list,
    "usage": Mapping,
    "session_id": str,
}
INIT_FIELDS: dict[str, type] = {
    "subtype": str,
    "model": str,
    "skills": list,
    "apiKeySource": str,
    "mcp_servers": list,
    "session_id": str,
}


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    for kind, words in _KINDS.items():
        if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
            return words
    return "a number" if isinstance(value, float) else type(value).__name__


def _shown(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def _fits(value: Any, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def checked_fields(
    event: Mapping[str, Any], fields: Mapping[str, type], what: str, unreadable: list[str]
) -> dict[str, Any]:
    """A copy of ``event`` without the ``fields`` that hold the wrong JSON type (``null`` is
    kept: it means "not given"), each one described in ``unreadable``."""
    kept = dict(event)
    for name, kind in fields.items():
        value = kept.get(name)
        if value is not None and not _fits(value, kind):
            unreadable.append(
                f"the {what}'s {name!r} is {_kind_of(value)} ({_shown(value)}), not {_KINDS[kind]}"
            )
            del kept[name]
    return kept


def _clean_init(event: Mapping[str, Any], unreadable: list[str]) -> dict[str, Any]:
    init = checked_fields(event, INIT_FIELDS, "init event", unreadable)
    if isinstance(init.get("skills"), list):
        names = [name for name in init["skills"] if isinstance(name, str)]
        if len(names) != len(init["skills"]):
            shown = _shown(event["skills"])
            unreadable.append(f"the init event's 'skills' hold a non-name ({shown})")
        init["skills"] = names
    if isinstance(init.get("mcp_servers"), list):
        servers = [
            entry
            for entry in init["mcp_servers"]
            if isinstance(entry, Mapping)
            and isinstance(entry.get("name", ""), str)
            and isinstance(entry.get("status", ""), str)
        ]
        if len(servers) != len(init["mcp_servers"]):
            unreadable.append(
                "the init event's 'mcp_servers' hold an entry that is not "
                f"{{name, status}} strings ({_shown(event['mcp_servers'])})"
            )
        init["mcp_servers"] = servers
    return init


class _Folder:
    """Accumulates events into a :class:`ClaudeStream`, pairing tool calls with results."""

    def __init__(self) -> None:
        self.stream = ClaudeStream()
        self._tool_index: dict[str, int] = {}
        self._skill_index: dict[str, int] = {}

    def feed(self, event: Mapping[str, Any]) -> None:
        self.stream.events += 1
        kind = event.get("type")
        if kind == "system":
            self._system(event)
        elif kind == "assistant":
            self._assistant(event)
        elif kind == "user":
            self._user(event)
        elif kind == "result":
            self.stream.result = checked_fields(
                event, RESULT_FIELDS, "result event", self.stream.unreadable
            )

    def _system(self, event: Mapping[str, Any]) -> None:
        subtype = event.get("subtype")
        if subtype == "init" and self.stream.init is None:
            self.stream.init = _clean_init(event, self.stream.unreadable)
        elif subtype == "api_retry":
            self.stream.retries.append(event)

    def _assistant(self, event: Mapping[str, Any]) -> None:
        message = event.get("message")
        if not isinstance(message, Mapping):
            return
        if isinstance(event.get("error"), str):
            self.stream.assistant_errors.append(event["error"])
        model = message.get("model")
        if isinstance(model, str) and model and model != SYNTHETIC_MODEL:
            self.stream.models.append(model)
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, Sequence):
            return
        synthetic = model == SYNTHETIC_MODEL
        for block in content:
            if isinstance(block, Mapping):
                self._assistant_block(block, synthetic)

    def _assistant_block(self, block: Mapping[str, Any], synthetic: bool) -> None:
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            if not synthetic:
                self.stream.turns.append(Turn(role="assistant", content=block["text"]))
        elif kind in ("tool_use", "server_tool_use", "mcp_tool_use"):
            name = str(block.get("name", ""))
            tool_input = block.get("input")
            if isinstance(block.get("id"), str):
                self._tool_index[block["id"]] = len(self.stream.turns)
            self.stream.turns.append(Turn(role="tool", tool_name=name, tool_input=tool_input))
            if name == SKILL_TOOL and isinstance(tool_input, Mapping):
                skill = tool_input.get("skill")
                if isinstance(skill, str) and skill.strip():
                    tool_id = block.get("id") if isinstance(block.get("id"), str) else None
                    if tool_id is not None:
                        self._skill_index[tool_id] = len(self.stream.skill_calls)
                    self.stream.skill_calls.append(SkillCall(skill.strip(), tool_id))

    def _user(self, event: Mapping[str, Any]) -> None:
        message = event.get("message")
        if not isinstance(message, Mapping):
            return
        content = message.get("content")
        if isinstance(content, str):
            self.stream.turns.append(Turn(role="user", content=content))
            return
        if not isinstance(content, Sequence):
            return
        for block in content:
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "tool_result":
                self._tool_result(block)
            elif block.get("type") == "text" and isinstance(block.get("text"), str):
                self.stream.turns.append(Turn(role="user", content=block["text"]))

    def _tool_result(self, block: Mapping[str, Any]) -> None:
        output = _text_of(block.get("content"))
        is_error = bool(block.get("is_error", False))
        skill_index = self._skill_index.pop(str(block.get("tool_use_id")), None)
        if skill_index is not None:
            self.stream.skill_calls[skill_index].succeeded = not is_error
        index = self._tool_index.pop(str(block.get("tool_use_id")), None)
        if index is None:
            self.stream.turns.append(Turn(role="tool", tool_output=output, is_error=is_error))
            return
        turn = self.stream.turns[index]
        self.stream.turns[index] = attrs.evolve(turn, tool_output=output, is_error=is_error)


def parse_lines(lines: Iterable[str]) -> ClaudeStream:
    """Fold stream-json lines into a :class:`ClaudeStream` (blank lines are skipped)."""
    folder = _Folder()
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if not line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            folder.stream.unparsed_lines += 1
            continue
        if not isinstance(event, Mapping):
            folder.stream.unparsed_lines += 1
            continue
        try:
            folder.feed(event)
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
            shown = line if len(line) <= 160 else line[:160] + "…"
            folder.stream.unreadable.append(
                f"line {number} could not be read ({type(exc).__name__}: {exc}): {shown}"
            )
    return folder.stream


def parse_stream(stdout: str) -> ClaudeStream:
    """Parse the whole stdout of one ``claude`` run."""
    return parse_lines(stdout.splitlines())


def _bare_name(call: str, names: set[str]) -> str:
    """A Skill call's name as installed: ``/x`` is ``x``; ``plugin:x`` is ``x`` if only that is."""
    name = call.lstrip("/")
    if name not in names and ":" in name:
        bare = name.rsplit(":", 1)[1]
        if bare in names:
            return bare
    return name


def _loaded(stream: ClaudeStream, installed: Sequence[str]) -> list[str] | None:
    """Every skill a Skill call loaded successfully, first load first (``None``: unknown)."""
    if not installed or not stream.finished:
        return None
    names = set(installed)
    seen: list[str] = []
    for call in stream.skill_calls:
        if call.succeeded is not True:
            continue  # refused, or no result at all: nothing was loaded
        name = _bare_name(call.skill, names)
        if name not in seen:
            seen.append(name)
    return seen


def activated_skills(stream: ClaudeStream, installed: Sequence[str]) -> list[str] | None:
    """Installed skills the model loaded through the Skill tool, in first-load order.

    Only a call whose tool result is not an error counts: Claude Code refuses unknown skills
    and skills marked ``disable-model-invocation: true``, and a refused call loaded nothing.
    ``None`` when nothing could be observed: no skill was installed, or the run never reached
    its ``result`` line (crash, timeout), so a missing call proves nothing. A plugin-qualified
    name (``plugin:skill``) counts for ``skill`` when only that bare name is installed.
    """
    loaded = _loaded(stream, installed)
    if loaded is None:
        return None
    names = set(installed)
    return [name for name in loaded if name in names]


def undeclared_skills(stream: ClaudeStream, installed: Sequence[str]) -> list[str] | None:
    """Skills the Skill tool loaded although the spec did not declare them (``None``: unknown).

    Bundled skills are switched off for attempts, so any other successful load came from
    outside the neighbourhood (e.g. a plugin or a user skill that leaked in).
    """
    loaded = _loaded(stream, installed)
    if loaded is None:
        return None
    names = set(installed)
    return [name for name in loaded if name not in names]


def outside_loads(
    stream: ClaudeStream, declared: Sequence[str], user_skills: Sequence[str]
) -> tuple[list[str], list[str]] | None:
    """With the user's setup loaded: the skills loaded from outside the declared set, split
    into (undeclared, built-in). Undeclared are the user's own skills and anything else the
    CLI did not ship; built-in are skills the CLI's ``init`` line lists that neither the spec
    nor the user brought (Claude Code's bundled skills and built-in plugins' skills).
    ``None`` when the run never reached its ``result`` line.
    """
    if not stream.finished:
        return None
    known = {*declared, *user_skills}
    listed = {str(name) for name in (stream.init or {}).get("skills") or ()}
    undeclared: list[str] = []
    built_in: list[str] = []
    for call in stream.skill_calls:
        if call.succeeded is not True:
            continue
        name = _bare_name(call.skill, known | listed)
        if name in declared or name in undeclared or name in built_in:
            continue
        if name not in known and name in listed:
            built_in.append(name)
        else:
            undeclared.append(name)
    return undeclared, built_in
