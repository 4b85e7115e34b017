"""Reading ``codex exec --json`` output: transcript, final answer, usage and failures.

Each stdout line is one JSON event: ``thread.started``, ``turn.started``,
``item.started``/``item.updated``/``item.completed`` (agent messages, reasoning, command
executions, file changes, MCP tool calls, web searches, error notices), ``turn.completed``
(with usage), ``turn.failed`` and top-level ``error`` events. Lines that are not JSON are
counted, never guessed at.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from caliper.plugin.attempt import Turn, Usage

_SKIPPED_ITEMS = frozenset({"reasoning", "todo_list", "error"})
READ_ITEMS = frozenset({"file_read", "read_file", "read"})
"""Item types that read one file by ``path`` (none in Codex 0.171; kept for later versions)."""


@attrs.define
class CodexRun:
    """What one ``codex exec --json`` stream said.

    ``commands`` keeps every shell command (in order) and ``failed_commands`` those that
    failed (non-zero exit or status ``failed``), so activation counts only reads that
    succeeded; ``errors``
    the messages of top-level ``error`` events; ``failure`` the ``turn.failed`` message;
    ``notices`` the text of ``error`` items (warnings Codex reports without failing).
    """

    thread_id: str | None = None
    turns: list[Turn] = attrs.field(factory=list)
    final_answer: str | None = None
    usage: Usage | None = None
    commands: list[str] = attrs.field(factory=list)
    failed_commands: list[str] = attrs.field(factory=list)
    read_paths: list[str] = attrs.field(factory=list)
    errors: list[str] = attrs.field(factory=list)
    failure: str | None = None
    completed: bool = False
    notices: list[str] = attrs.field(factory=list)
    events: int = 0
    bad_lines: int = 0
    unreadable: list[str] = attrs.field(factory=list)
    """What the CLI sent that could not be read (an item of the wrong JSON shape), described
    with the value it held."""

    @property
    def succeeded_commands(self) -> list[str]:
        """The shell commands that completed with exit code 0, in order."""
        failed = list(self.failed_commands)
        kept = []
        for command in self.commands:
            if command in failed:
                failed.remove(command)
            else:
                kept.append(command)
        return kept

    @property
    def usable(self) -> bool:
        """Whether the stream had any structured event at all."""
        return self.events > 0


def normalise_usage(raw: Mapping[str, Any]) -> Usage:
    """Codex counts cached (and cache-written) tokens inside ``input_tokens``: take them out."""

    def number(key: str) -> int:
        value = raw.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    cached = number("cached_input_tokens")
    written = number("cache_write_input_tokens")
    return Usage(
        input_tokens=max(number("input_tokens") - cached - written, 0),
        output_tokens=number("output_tokens"),
        cache_read_tokens=cached,
        cache_creation_tokens=written,
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _mcp_output(item: Mapping[str, Any]) -> tuple[str | None, bool]:
    error = item.get("error")
    if error:
        message = error.get("message") if isinstance(error, Mapping) else error
        return str(message), True
    result = item.get("result")
    if not isinstance(result, Mapping):
        return None, item.get("status") == "failed"
    parts = []
    for block in result.get("content") or ():
        if isinstance(block, Mapping) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    if not parts and result.get("structured_content") is not None:
        parts.append(json.dumps(result["structured_content"], ensure_ascii=False))
    return "\n".join(parts), bool(result.get("is_error")) or item.get("status") == "failed"


def item_turn(item: Mapping[str, Any]) -> Turn | None:
    """The transcript step of one item (``None`` for items the transcript leaves out)."""
    kind = item.get("type")
    status = item.get("status")
    if kind == "agent_message":
        return Turn(role="assistant", content=_text(item.get("text")))
    if kind in _SKIPPED_ITEMS:
        return None
    if kind == "command_execution":
        code = item.get("exit_code")
        failed = status == "failed" or (isinstance(code, int) and code != 0)
        return Turn(
            role="tool",
            tool_name="shell",
            tool_input={"command": item.get("command")},
            tool_output=_text(item.get("aggregated_output")),
            is_error=failed if status != "in_progress" else None,
        )
    if kind == "file_change":
        return Turn(
            role="tool",
            tool_name="apply_patch",
            tool_input={"changes": item.get("changes")},
            tool_output=_text(status),
            is_error=status == "failed" if status != "in_progress" else None,
        )
    if kind == "mcp_tool_call":
        output, failed = _mcp_output(item)
        return Turn(
            role="tool",
            tool_name=f"mcp__{item.get('server')}__{item.get('tool')}",
            tool_input=item.get("arguments"),
            tool_output=output,
            is_error=failed if status != "in_progress" else None,
        )
    if kind == "web_search":
        return Turn(role="tool", tool_name="web_search", tool_input={"query": item.get("query")})
    details = {k: v for k, v in item.items() if k not in ("id", "type")}
    return Turn(role="tool", tool_name=str(kind), tool_input=details)


class _Items:
    """Items in order of first appearance; ``item.completed`` replaces ``item.started``."""

    def __init__(self) -> None:
        self.order: list[Mapping[str, Any]] = []
        self.slot: dict[str, int] = {}

    def put(self, item: Mapping[str, Any], *, final: bool) -> None:
        key = item.get("id")
        if isinstance(key, str) and key in self.slot:
            self.order[self.slot[key]] = item
            if final:
                del self.slot[key]
            return
        self.order.append(item)
        if isinstance(key, str) and not final:
            self.slot[key] = len(self.order) - 1


def _shown(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def _collect(run: CodexRun, items: list[Mapping[str, Any]]) -> None:
    for item in items:
        if not isinstance(item.get("type"), str):
            run.unreadable.append(f"an item whose 'type' is not a string: {_shown(item)}")
            continue
        try:
            _collect_one(run, item)
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as exc:
            run.unreadable.append(
                f"an item that could not be read ({type(exc).__name__}: {exc}): {_shown(item)}"
            )


def _collect_one(run: CodexRun, item: Mapping[str, Any]) -> None:
    """Fold one item into ``run``."""
    turn = item_turn(item)
    if turn is not None:
        run.turns.append(turn)
    kind = item.get("type")
    if kind == "command_execution" and isinstance(item.get("command"), str):
        run.commands.append(item["command"])
        if turn is not None and turn.is_error is not False:
            run.failed_commands.append(item["command"])
    elif (
        kind in READ_ITEMS and isinstance(item.get("path"), str) and item.get("status") != "failed"
    ):
        run.read_paths.append(item["path"])
    elif kind == "agent_message" and isinstance(item.get("text"), str):
        run.final_answer = item["text"]
    elif kind == "error" and isinstance(item.get("message"), str):
        run.notices.append(item["message"])


def _message(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("message"), str):
        return value["message"]
    return None


def parse_events(stdout: str) -> CodexRun:
    """Parse a whole ``codex exec --json`` stdout."""
    run = CodexRun()
    items = _Items()
    for line in stdout.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            run.bad_lines += 1
            continue
        if not isinstance(event, Mapping) or not isinstance(event.get("type"), str):
            run.bad_lines += 1
            continue
        run.events += 1
        kind = event["type"]
        item = event.get("item")
        if kind.startswith("item.") and isinstance(item, Mapping):
            final = kind == "item.completed"
            items.put(item, final=final)
        elif kind == "thread.started":
            run.thread_id = _text(event.get("thread_id"))
        elif kind == "turn.completed":
            run.completed = True
            usage = event.get("usage")
            if isinstance(usage, Mapping):
                step = normalise_usage(usage)
                run.usage = step if run.usage is None else run.usage + step
        elif kind == "turn.failed":
            run.failure = _message(event.get("error")) or "the turn failed (no message given)"
        elif kind == "error":
            run.errors.append(_message(event) or "unknown error")
    _collect(run, items.order)
    return run
