"""Turning a spec's MCP servers into a ``--mcp-config`` file for Claude Code.

The file holds resolved secrets (Claude Code reads the values from it), so it is written 0600
into the sandbox's private folder (the secret rule of
:class:`caliper.plugin.backend.McpTranslator`).
Tools then reach the model as ``mcp__<server>__<tool>``.

Claude Code does not stop when a server cannot be reached or refuses its headers: it runs
without that server's tools and only says so in the ``init`` line (``mcp_servers`` with
``status: failed``). :func:`unavailable_servers` reads that, so the backend can stop the run
instead of scoring attempts that never had the tools.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from caliper.plugin.attempt import AttemptSandbox, McpServerConfig, NativeMcpConfig
from caliper.plugin.backend import McpTranslator
from caliper.plugin.mcp_unusable import unusable_mcp_message
from caliper.plugin.private_files import write_secret_file

CONFIG_NAME = "claude-mcp.json"
UNAVAILABLE_STATUSES = frozenset({"failed", "needs-auth"})
"""``init`` statuses meaning the server's tools are not there (``pending`` may still connect)."""


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
        path = write_secret_file(sandbox, CONFIG_NAME, json.dumps(config, indent=2))
        return NativeMcpConfig(argv=("--mcp-config", str(path)), data=path)


def unavailable_servers(init: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """``(name, status)`` of each server the ``init`` line reports as failed or needing auth.

    With ``--strict-mcp-config`` the only servers loaded are the spec's.
    """
    entries = (init or {}).get("mcp_servers")
    if not isinstance(entries, list):
        return []
    return [
        (str(entry.get("name")), str(entry.get("status")))
        for entry in entries
        if isinstance(entry, Mapping) and entry.get("status") in UNAVAILABLE_STATUSES
    ]


def unavailable_message(servers: Sequence[tuple[str, str]]) -> str:
    """Why the run stops: which servers, with the status Claude Code gave each."""
    return unusable_mcp_message("Claude Code", servers)
