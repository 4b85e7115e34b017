"""Reading the JSON event stream of ``pi --print --mode json``.

pi prints one JSON object per line. Two shapes exist and both are read the same way:

* pi 0.7x: ``message_update`` events carry whole ``partial``/``message`` snapshots, and the
  run ends with ``agent_end`` (repeated once per automatic retry);
* pi 1.x: ``message_update`` carries deltas only, a ``system`` message opens the run, and
  ``agent_settled`` marks its real end.

Only ``message_end`` (the finished message), ``tool_execution_end``, ``agent_end`` and
``agent_settled`` are used, so the
difference in ``message_update`` does not matter. Lines that are not JSON objects (a warning
printed to stdout) are skipped.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from caliper.plugin.attempt import Usage

DROPPED_PREFIX = "[… "
"""How ``caliper.system.process`` marks output whose beginning it dropped."""


@attrs.frozen
class ToolCall:
    """One tool call the model asked for, with what pi's tool returned."""

    id: str
    name: str
    arguments: Any
    output: str | None = None
    is_error: bool | None = None


@attrs.frozen
class PiRun:
    """Everything read from one run's event lines, in order.

    ``messages`` are the finished messages (``message_end``), ``tool_results`` maps a tool
    call id to its ``(output, is_error)``, ``settled`` tells whether pi 1.x reported the end
    of the run, and ``event_count`` how many events were read at all.
    """

    messages: tuple[Mapping[str, Any], ...] = ()
    tool_results: Mapping[str, tuple[str | None, bool | None]] = attrs.field(factory=dict)
    settled: bool = False
    event_count: int = 0

    @property
    def assistant_messages(self) -> list[Mapping[str, Any]]:
        return [m for m in self.messages if m.get("role") == "assistant"]

    @property
    def last_assistant(self) -> Mapping[str, Any] | None:
        found = self.assistant_messages
        return found[-1] if found else None

    @property
    def usage(self) -> Usage | None:
        """Token usage summed over every finished assistant message, with the dollar cost pi
        reports (``usage.cost.total``) when it reports one above zero.

        pi prices tokens from its model table, or from the ``cost`` a custom model declares
        in ``models.json``; a model with no price there reports 0, which is "not reported",
        never a free attempt."""
        total: Usage | None = None
        for message in self.assistant_messages:
            raw = message.get("usage")
            if not isinstance(raw, Mapping):
                continue
            part = Usage(
                input_tokens=_int(raw.get("input")),
                output_tokens=_int(raw.get("output")),
                cache_read_tokens=_int(raw.get("cacheRead")),
                cache_creation_tokens=_int(raw.get("cacheWrite")),
                cost_usd=_reported_cost(raw.get("cost")),
            )
            total = part if total is None else total + part
        return total

    @property
    def model(self) -> str | None:
        """``provider/model`` of the last assistant message that names one."""
        for message in reversed(self.assistant_messages):
            model = message.get("model")
            if isinstance(model, str) and model:
                provider = message.get("provider")
                return f"{provider}/{model}" if isinstance(provider, str) and provider else model
        return None

    def tool_calls(self) -> list[ToolCall]:
        """Every tool call in order, joined with its result."""
        calls = []
        for message in self.assistant_messages:
            for block in content_blocks(message):
                if block.get("type") != "toolCall":
                    continue
                call_id = str(block.get("id") or "")
                output, is_error = self.tool_results.get(call_id, (None, None))
                calls.append(
                    ToolCall(
                        id=call_id,
                        name=str(block.get("name") or ""),
                        arguments=block.get("arguments"),
                        output=output,
                        is_error=is_error,
                    )
                )
        return calls


def _reported_cost(cost: Any) -> float | None:
    """``cost.total`` of one message's usage in dollars, or ``None`` when it is absent, not a
    finite number, or not above zero (pi's figure for a model it has no price for)."""
    total = cost.get("total") if isinstance(cost, Mapping) else None
    if not isinstance(total, (int, float)) or isinstance(total, bool):
        return None
    return float(total) if math.isfinite(total) and total > 0 else None


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def content_blocks(message: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """A message's content blocks (a bare string becomes one text block)."""
    content = message.get("content")
    if isinstance(content, list):
        return [b for b in content if isinstance(b, Mapping)]
    if isinstance(content, str) and content:
        return [{"type": "text", "text": content}]
    return []


def message_text(message: Mapping[str, Any]) -> str:
    """The text blocks of a message joined together (thinking and tool calls left out)."""
    return "".join(
        str(b.get("text") or "") for b in content_blocks(message) if b.get("type") == "text"
    )


def result_text(result: Any) -> str | None:
    """A tool result's content as text; images become a placeholder."""
    if not isinstance(result, Mapping):
        return None
    parts = []
    for block in content_blocks(result):
        if block.get("type") == "text":
            parts.append(str(block.get("text") or ""))
        elif block.get("type") == "image":
            parts.append("[image]")
    return "".join(parts)


def _tool_result(message: Mapping[str, Any]) -> tuple[str, tuple[str | None, bool | None]] | None:
    if message.get("role") == "toolResult" and message.get("toolCallId"):
        return str(message["toolCallId"]), (result_text(message), _bool(message.get("isError")))
    return None


def parse_lines(lines: Iterable[str]) -> PiRun:
    """Read pi's event lines (either format) into a :class:`PiRun`.

    When the start of the output was dropped (caliper keeps the last 64 MiB of a very long
    0.7x stream), the messages come from the last ``agent_end`` instead, which repeats the
    whole run.
    """
    messages: list[Mapping[str, Any]] = []
    results: dict[str, tuple[str | None, bool | None]] = {}
    run_messages: list[Mapping[str, Any]] | None = None
    settled = truncated = False
    count = 0
    for number, line in enumerate(lines):
        line = line.strip()
        if number == 0 and line.startswith(DROPPED_PREFIX):
            truncated = True
        if not line.startswith("{"):
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict):
            continue
        count += 1
        kind = event.get("type")
        if kind == "message_end" and isinstance(event.get("message"), Mapping):
            messages.append(event["message"])
            found = _tool_result(event["message"])
            if found:
                results.setdefault(*found)
        elif kind == "tool_execution_end" and event.get("toolCallId"):
            results[str(event["toolCallId"])] = (
                result_text(event.get("result")),
                _bool(event.get("isError")),
            )
        elif kind == "agent_end" and isinstance(event.get("messages"), list):
            run_messages = [m for m in event["messages"] if isinstance(m, Mapping)]
        elif kind == "agent_settled":
            settled = True
    if truncated and run_messages is not None:
        messages = run_messages
        for message in messages:
            found = _tool_result(message)
            if found:
                results.setdefault(*found)
    return PiRun(
        messages=tuple(messages),
        tool_results=results,
        settled=settled,
        event_count=count,
    )


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def parse_output(stdout: str) -> PiRun:
    """Read the whole stdout of a pi run."""
    return parse_lines(stdout.splitlines())
