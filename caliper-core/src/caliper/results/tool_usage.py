"""Tool calls per MCP server and tool, counted from the attempts' transcripts.

An MCP call is recognised by the name the backend gives it (``Backend.mcp_tool_name``,
``mcp__<server>__<tool>`` by default): the name is turned into a pattern with the server
and tool as its two fields. A call is an *error* when its turn's ``is_error`` is true. Every
attempt with a transcript counts (unusable ones too: the calls were made). Declared servers
that ``--ablate`` left out are listed with no calls, so a control arm reads against the full
run. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import attrs

from caliper.results.models import RunResults
from caliper.system import attrs_classes

_SERVER, _TOOL = "\x00server\x00", "\x00tool\x00"


@attrs_classes.define
class ToolCount:
    """Calls of one tool, how many of them ended in an error, and in how many attempts."""

    name: str
    calls: int = 0
    errors: int = 0
    attempts: int = 0


@attrs_classes.define
class ServerUsage:
    """One MCP server's calls over the run, and per tool."""

    name: str
    calls: int = 0
    errors: int = 0
    attempts: int = 0
    ablated: bool = False
    tools: list[ToolCount] = attrs.field(factory=list)


@attrs_classes.define
class ToolUsage:
    """The run's tool calls: per MCP server (``servers``) and every other tool (``tools``).

    ``attempts_with_transcript`` is how many attempts the counts rest on; ``recognised`` is
    false when the backend's MCP names cannot be told apart from other tools (no fixed
    prefix), and then every call is under ``tools``."""

    attempts_with_transcript: int
    servers: list[ServerUsage]
    tools: list[ToolCount]
    recognised: bool = True

    def data(self) -> dict[str, object]:
        """Plain JSON data."""
        return attrs.asdict(self)


def mcp_pattern(mcp_tool_name: Callable[[str, str], str]) -> re.Pattern[str] | None:
    """A pattern with groups ``server`` and ``tool`` matching the names ``mcp_tool_name``
    gives, or ``None`` when the name has no fixed text before the server."""
    template = mcp_tool_name(_SERVER, _TOOL)
    if _SERVER not in template or _TOOL not in template or template.startswith(_SERVER):
        return None
    pattern = re.escape(template)
    pattern = pattern.replace(re.escape(_SERVER), "(?P<server>.+?)", 1)
    pattern = pattern.replace(re.escape(_TOOL), "(?P<tool>.+)", 1)
    return re.compile(f"^{pattern}$")


def _count(table: dict[str, ToolCount], name: str, error: bool, seen: set[str], key: str) -> None:
    """One call of ``name``; ``key`` marks it seen in this attempt (its ``seen`` set)."""
    entry = table.setdefault(name, ToolCount(name))
    entry.calls += 1
    entry.errors += error
    if key not in seen:
        entry.attempts += 1
        seen.add(key)


def tool_usage(results: RunResults, pattern: re.Pattern[str] | None) -> ToolUsage:
    """Count every tool call of ``results`` (MCP calls by ``pattern``, :func:`mcp_pattern`)."""
    servers: dict[str, ServerUsage] = {}
    server_tools: dict[str, dict[str, ToolCount]] = {}
    others: dict[str, ToolCount] = {}
    with_transcript = 0
    for task in results.tasks:
        for record in task.attempts:
            if record.transcript is None:
                continue
            with_transcript += 1
            seen: set[str] = set()
            for turn in record.transcript:
                if turn.role != "tool" or not turn.tool_name:
                    continue
                error = turn.is_error is True
                found = pattern.match(turn.tool_name) if pattern is not None else None
                if found is None:
                    _count(others, turn.tool_name, error, seen, f"tool:{turn.tool_name}")
                    continue
                name = found.group("server")
                server = servers.setdefault(name, ServerUsage(name))
                server.calls += 1
                server.errors += error
                if f"server:{name}" not in seen:
                    server.attempts += 1
                    seen.add(f"server:{name}")
                tools = server_tools.setdefault(name, {})
                tool = found.group("tool")
                _count(tools, tool, error, seen, f"mcp:{name}/{tool}")
    for name in results.meta.ablated_mcp:
        servers.setdefault(name, ServerUsage(name)).ablated = True
    for name, server in servers.items():
        server.tools = sorted(server_tools.get(name, {}).values(), key=lambda t: -t.calls)
    return ToolUsage(
        with_transcript,
        sorted(servers.values(), key=lambda s: s.name),
        sorted(others.values(), key=lambda t: (-t.calls, t.name)),
        recognised=pattern is not None,
    )
