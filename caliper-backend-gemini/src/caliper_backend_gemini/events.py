"""Reading ``gemini -o stream-json`` output: one JSON event per line.

Events (Gemini CLI 0.61.0): ``init`` (session id, model), ``message`` (``role`` user or
assistant; assistant text arrives in ``delta`` pieces), ``tool_use`` (``tool_name``,
``tool_id``, ``parameters``), ``tool_result`` (``tool_id``, ``status`` success or error,
``output`` or ``error``), ``error`` (a non-fatal warning) and a final ``result`` (``status``
success or error, ``error`` with its message, ``stats`` with token counts).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs

from caliper.plugin.attempt import Turn, Usage


@attrs.define
class ToolCall:
    """One tool call and, once seen, its result."""

    tool_id: str
    name: str
    parameters: Any
    succeeded: bool | None = None
    output: str | None = None


@attrs.define
class GeminiRun:
    """What one run's events said."""

    model: str | None = None
    session_id: str | None = None
    turns: list[Turn] = attrs.field(factory=list)
    calls: list[ToolCall] = attrs.field(factory=list)
    result: dict[str, Any] | None = None
    warnings: list[str] = attrs.field(factory=list)
    event_count: int = 0
    unreadable: list[str] = attrs.field(factory=list)

    @property
    def finished(self) -> bool:
        """Whether the final ``result`` event arrived."""
        return self.result is not None

    @property
    def succeeded(self) -> bool:
        """Whether the run ended with ``result.status == "success"``."""
        return self.result is not None and self.result.get("status") == "success"

    @property
    def failure(self) -> str | None:
        """The message of a failed ``result``, else ``None``."""
        if self.result is None or self.result.get("status") == "success":
            return None
        error = self.result.get("error")
        if isinstance(error, dict):
            return str(error.get("message") or error.get("type") or "unknown error")
        return str(error or self.result.get("status"))

    @property
    def final_answer(self) -> str | None:
        """The text of the last assistant message (after the last tool call)."""
        for turn in reversed(self.turns):
            if turn.role == "tool":
                return None
            if turn.role == "assistant" and turn.content:
                return turn.content
        return None

    @property
    def usage(self) -> Usage | None:
        """Token usage from ``result.stats`` (``input`` already excludes cached tokens)."""
        stats = (self.result or {}).get("stats")
        if not isinstance(stats, dict):
            return None
        cached = _int(stats.get("cached")) or 0
        fresh = _int(stats.get("input"))
        if fresh is None and _int(stats.get("input_tokens")) is not None:
            fresh = max(0, (_int(stats.get("input_tokens")) or 0) - cached)
        return Usage(
            input_tokens=fresh,
            output_tokens=_int(stats.get("output_tokens")),
            cache_read_tokens=cached,
            cache_creation_tokens=0,
        )

    def successful_calls(self, name: str) -> list[ToolCall]:
        """Calls of tool ``name`` whose result said success, in order."""
        return [c for c in self.calls if c.name == name and c.succeeded]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("message"), str):
        return value["message"]
    return json.dumps(value, ensure_ascii=False)


def _assistant(run: GeminiRun, content: str, delta: bool) -> None:
    last = run.turns[-1] if run.turns else None
    if delta and last is not None and last.role == "assistant":
        run.turns[-1] = Turn(role="assistant", content=(last.content or "") + content)
    else:
        run.turns.append(Turn(role="assistant", content=content))


def _tool_result(run: GeminiRun, event: dict[str, Any]) -> None:
    tool_id = str(event.get("tool_id", ""))
    ok = event.get("status") == "success"
    output = _text(event.get("output")) if ok else _text(event.get("error") or event.get("output"))
    for call in run.calls:
        if call.tool_id == tool_id and call.succeeded is None:
            call.succeeded, call.output = ok, output
            position = _turn_of(run, tool_id)
            if position is not None:
                run.turns[position] = attrs.evolve(
                    run.turns[position], tool_output=output, is_error=not ok
                )
            return


def _turn_of(run: GeminiRun, tool_id: str) -> int | None:
    names = [c.tool_id for c in run.calls]
    wanted = names.index(tool_id)
    seen = -1
    for position, turn in enumerate(run.turns):
        if turn.role == "tool":
            seen += 1
            if seen == wanted:
                return position
    return None


def parse_events(stdout: str | Sequence[str]) -> GeminiRun:
    """All events of a run; lines that are not JSON objects are skipped (Node warnings)."""
    run = GeminiRun()
    lines = stdout.splitlines() if isinstance(stdout, str) else stdout
    for line in lines:
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            run.unreadable.append(line[:200])
            continue
        if not isinstance(event, dict):
            continue
        run.event_count += 1
        kind = event.get("type")
        if kind == "init":
            run.model = event.get("model") if isinstance(event.get("model"), str) else None
            run.session_id = event.get("session_id")
        elif kind == "message" and event.get("role") == "assistant":
            _assistant(run, str(event.get("content") or ""), bool(event.get("delta")))
        elif kind == "tool_use":
            call = ToolCall(
                tool_id=str(event.get("tool_id", "")),
                name=str(event.get("tool_name", "")),
                parameters=event.get("parameters"),
            )
            run.calls.append(call)
            run.turns.append(Turn(role="tool", tool_name=call.name, tool_input=call.parameters))
        elif kind == "tool_result":
            _tool_result(run, event)
        elif kind == "error":
            run.warnings.append(_text(event.get("message")) or line[:200])
        elif kind == "result":
            run.result = event
    return run
