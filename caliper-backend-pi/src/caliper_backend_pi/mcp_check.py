"""Whether pi offered the model every spec MCP server's tools, read from pi's event stream.

pi 1.x connects MCP servers in the background and goes on without one that fails (down,
refusing the token, a command that does not start); in ``--print --mode json`` it says so
nowhere on stdout or stderr. What it does print is the list of tools of every model request:
the ``system`` message that opens a run carries ``toolsAdded``, the tools the first request
declares. pi waits up to 10 seconds for servers with ``"exposure": "direct"`` (which caliper
always asks for) before that request, so a server whose ``mcp__<server>__…`` tools are not
in that list was not usable when the model started. Nothing here reads the model's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from caliper.plugin.mcp_unusable import unusable_mcp_message
from caliper_backend_pi.events import PiRun

MAX_TOOL_NAME = 64
HASH_SUFFIX = 9
"""pi shortens a tool name longer than 64 characters to 55 of them plus ``_`` and 8 hex."""


def tool_prefix(server: str) -> str:
    """The start every tool name of ``server`` has in pi (``mcp__<server>__``, sanitised)."""
    prefix = re.sub(r"[^A-Za-z0-9_]", "_", f"mcp__{server}__")
    return prefix[: MAX_TOOL_NAME - HASH_SUFFIX]


def opening_tools(run: PiRun) -> list[str] | None:
    """Names of the tools the run's first model request declared.

    ``None`` when the run has no opening ``system`` message (pi 0.7x, or output whose
    beginning was dropped), so nothing can be said.
    """
    for message in run.messages:
        if message.get("role") == "system":
            added = message.get("toolsAdded")
            if not isinstance(added, list):
                return []
            return [str(t.get("name")) for t in added if isinstance(t, Mapping) and t.get("name")]
        if message.get("role") == "assistant":
            return None
    return None


def servers_without_tools(run: PiRun, servers: Iterable[str]) -> list[str]:
    """The spec servers none of whose tools the first model request declared, in order."""
    tools = opening_tools(run)
    if tools is None:
        return []
    return [name for name in servers if not any(t.startswith(tool_prefix(name)) for t in tools)]


def server_names(native_data: Any) -> list[str]:
    """The server names in the translated ``mcpServers`` block."""
    block = native_data.get("mcpServers") if isinstance(native_data, Mapping) else None
    return [str(name) for name in block] if isinstance(block, Mapping) else []


def unusable_message(names: list[str]) -> str:
    """The setup error naming every server whose tools the model was never offered."""
    return unusable_mcp_message(
        "pi",
        [(name, None) for name in names],
        look_closer="pi reports no reason in print mode (a server may also take longer than "
        "pi's 10-second start-up wait): run `pi mcp list` with the same mcp.json to see pi's "
        "own error.",
    )
