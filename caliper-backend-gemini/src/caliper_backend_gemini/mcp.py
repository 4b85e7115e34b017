"""Turning a spec's MCP servers into Gemini CLI's ``mcpServers`` settings.

``stdio`` servers get ``command``/``args``/``env``; ``http`` servers ``httpUrl`` and ``sse``
servers ``url``, each with ``headers``. Gemini CLI names their tools ``mcp_<server>_<tool>``.

The secret rule (see :class:`caliper.plugin.backend.McpTranslator`): Gemini CLI expands
``${VAR}`` in ``settings.json`` from its environment, so every ``env`` and header value and
every URL is written as a ``${CALIPER_MCP_SECRET_n}`` reference whose value is in
``NativeMcpConfig.env`` (the CLI's environment only). A command or argument holding a ``$``
goes the same way, so the CLI cannot expand it into something else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from caliper.plugin.attempt import AttemptSandbox, McpServerConfig, NativeMcpConfig
from caliper.plugin.backend import McpTranslator
from caliper.plugin.mcp import EnvReferences


def _literal(value: str, secret: EnvReferences) -> str:
    return secret(value) if "$" in value else value


def server_entry(server: McpServerConfig, secret: EnvReferences) -> dict[str, Any]:
    """One ``mcpServers`` entry, its secrets recorded in ``secret``."""
    if server.transport == "stdio":
        entry: dict[str, Any] = {
            "command": _literal(server.command or "", secret),
            "args": [_literal(arg, secret) for arg in server.args],
        }
        if server.env:
            entry["env"] = {key: secret(value) for key, value in server.env.items()}
    else:
        key = "httpUrl" if server.transport == "http" else "url"
        entry = {key: secret(server.url or "")}
        if server.headers:
            entry["headers"] = {k: secret(v) for k, v in server.headers.items()}
    entry["trust"] = True
    return entry


def entries_of(native: NativeMcpConfig | None) -> Mapping[str, Mapping[str, Any]]:
    """The entries a translator produced (empty when the spec declares no servers)."""
    if native is None or not isinstance(native.data, Mapping):
        return {}
    return native.data


class GeminiMcpTranslator(McpTranslator):
    """Builds the entries; the secrets go in ``env``, for Gemini CLI's environment only."""

    id = "gemini"

    def translate(
        self, servers: Sequence[McpServerConfig], sandbox: AttemptSandbox
    ) -> NativeMcpConfig:
        secret = EnvReferences(empty_as_literal=True)
        entries = {server.name: server_entry(server, secret) for server in servers}
        return NativeMcpConfig(env=secret.env, data=entries)
