"""Turning a spec's ``mcp:`` servers into Hermes' ``mcp_servers`` config block.

Resolved secrets (stdio ``env`` values, remote ``url`` and ``headers``) are not written into
the attempt's ``config.yaml``: the block holds ``${CALIPER_MCP_…}`` references that Hermes
expands from its environment, and the values travel only in the process environment.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from caliper.plugin.attempt import AttemptSandbox, McpServerConfig, NativeMcpConfig
from caliper.plugin.backend import McpTranslator
from caliper.plugin.mcp import EnvReferences


class HermesMcpTranslator(McpTranslator):
    """Writes stdio servers as ``command``/``args``/``env``, remote ones as ``url``/``headers``."""

    id = "hermes"

    def translate(
        self, servers: Sequence[McpServerConfig], sandbox: AttemptSandbox
    ) -> NativeMcpConfig:
        """The ``mcp_servers`` mapping (in ``data``) and the secret values (in ``env``)."""
        secret = EnvReferences()

        block: dict[str, Any] = {}
        for server in servers:
            entry: dict[str, Any]
            if server.transport == "stdio":
                entry = {"command": server.command, "args": list(server.args)}
                if server.env:
                    entry["env"] = {key: secret(value) for key, value in server.env.items()}
            else:
                entry = {"url": secret(server.url or "")}
                if server.headers:
                    entry["headers"] = {k: secret(v) for k, v in server.headers.items()}
                if server.transport == "sse":
                    entry["transport"] = "sse"
            entry["enabled"] = True
            block[server.name] = entry
        return NativeMcpConfig(env=secret.env, data={"mcp_servers": block})
