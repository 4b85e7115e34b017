"""Tool calls per MCP server and tool, for the text, Markdown, JSON and HTML reports."""

from __future__ import annotations

from caliper.host.plugins import PluginHost
from caliper.results.models import RunResults
from caliper.results.tool_usage import ToolUsage, mcp_pattern, tool_usage


def _default_name(server: str, tool: str) -> str:
    return f"mcp__{server}__{tool}"


def run_tool_usage(results: RunResults) -> ToolUsage:
    """:func:`tool_usage` with the MCP names of the run's backend (the default
    ``mcp__<server>__<tool>`` rule when it is not installed)."""
    name_of = _default_name
    backend = results.meta.backend
    if backend:
        try:
            found = PluginHost().backends([backend]).get(backend)
        except Exception:  # a missing or broken plugin must not stop a report
            found = None
        if found is not None:
            name_of = found.mcp_tool_name
    return tool_usage(results, mcp_pattern(name_of))


def usage_lines(usage: ToolUsage) -> list[str]:
    """``server: 12 calls (1 error) in 5 attempts — tool 8, other 4`` per MCP server."""
    lines = []
    for server in usage.servers:
        if server.ablated and not server.calls:
            lines.append(f"{server.name}: left out (--ablate mcp:{server.name}), no calls")
            continue
        errors = f", {server.errors} error{'s' if server.errors != 1 else ''}"
        tools = ", ".join(
            f"{t.name} {t.calls}" + (f" ({t.errors} failed)" if t.errors else "")
            for t in server.tools
        )
        calls = f"{server.calls} call{'s' if server.calls != 1 else ''}"
        attempts = f"{server.attempts} attempt{'s' if server.attempts != 1 else ''}"
        lines.append(f"{server.name}: {calls}{errors} in {attempts} — {tools}")
    return lines
