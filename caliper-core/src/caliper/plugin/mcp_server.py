"""An MCP server as a spec declares it, before its ``${VAR}`` references are resolved."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from caliper.system import attrs_classes


@attrs_classes.frozen
class McpServer:
    """One MCP server as declared (``${VAR}`` unresolved). ``transport``: stdio, http, sse."""

    name: str
    transport: str = "stdio"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    url: str | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
