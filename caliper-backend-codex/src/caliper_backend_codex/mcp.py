"""Turning a spec's MCP servers into ``[mcp_servers.<name>]`` tables of Codex's config.toml.

The translator only builds the tables (``NativeMcpConfig.data``); the backend merges them into
the attempt's ``config.toml`` (mode 0600, inside the sandbox) when it writes it, replacing
every server of the user's own config. Stdio servers keep ``command``/``args``/``env``; remote
servers become ``url`` plus static ``http_headers`` (Codex speaks streamable HTTP only, so
``http`` and ``sse`` both map to it). Servers are ``required``, so one that fails to start
stops the run loudly instead of silently leaving the agent without its tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from caliper.attempt import AttemptSandbox, McpServerConfig, NativeMcpConfig
from caliper.backend import McpTranslator


def server_table(server: McpServerConfig) -> dict[str, Any]:
    """One ``[mcp_servers.<name>]`` table."""
    if server.transport == "stdio":
        table: dict[str, Any] = {"command": server.command or "", "args": list(server.args)}
        if server.env:
            table["env"] = dict(server.env)
    else:
        table = {"url": server.url or ""}
        if server.headers:
            table["http_headers"] = dict(server.headers)
    table["required"] = True
    return table


def tables_of(native: NativeMcpConfig | None) -> Mapping[str, Mapping[str, Any]]:
    """The tables a translator produced (empty when the spec declares no servers)."""
    if native is None or not isinstance(native.data, Mapping):
        return {}
    return native.data


class CodexMcpTranslator(McpTranslator):
    """Builds the tables; secrets end up only in the sandbox's CODEX_HOME."""

    id = "codex"

    def translate(
        self, servers: Sequence[McpServerConfig], sandbox: AttemptSandbox
    ) -> NativeMcpConfig:
        return NativeMcpConfig(data={server.name: server_table(server) for server in servers})
