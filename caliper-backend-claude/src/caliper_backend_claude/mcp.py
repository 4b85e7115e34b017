"""Turning a spec's MCP servers into a ``--mcp-config`` file for Claude Code.

The file holds resolved secrets, so it is written 0600 into the sandbox's private folder.
Tools then reach the model as ``mcp__<server>__<tool>``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from caliper.attempt import AttemptSandbox, McpServerConfig, NativeMcpConfig
from caliper.backend import McpTranslator

CONFIG_NAME = "claude-mcp.json"


def server_entry(server: McpServerConfig) -> dict[str, Any]:
    """One ``mcpServers`` entry in Claude Code's format."""
    if server.transport == "stdio":
        entry: dict[str, Any] = {
            "type": "stdio",
            "command": server.command,
            "args": list(server.args),
        }
        if server.env:
            entry["env"] = dict(server.env)
        return entry
    entry = {"type": server.transport, "url": server.url}
    if server.headers:
        entry["headers"] = dict(server.headers)
    return entry


class ClaudeMcpTranslator(McpTranslator):
    """Writes ``<private>/claude-mcp.json`` and passes it with ``--mcp-config``."""

    id = "claude-code"

    def translate(
        self, servers: Sequence[McpServerConfig], sandbox: AttemptSandbox
    ) -> NativeMcpConfig:
        config = {"mcpServers": {server.name: server_entry(server) for server in servers}}
        path = sandbox.private / CONFIG_NAME
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(config, handle, indent=2)
        path.chmod(0o600)
        return NativeMcpConfig(argv=("--mcp-config", str(path)), data=path)
