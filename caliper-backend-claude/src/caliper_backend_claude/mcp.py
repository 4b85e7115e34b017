"""Turning a spec's MCP servers into a ``--mcp-config`` file for Claude Code.

The file holds resolved secrets, so it is written 0600 into the sandbox's private folder.
Tools then reach the model as ``mcp__<server>__<tool>``.

Claude Code does not stop when a server cannot be reached or refuses its headers: it runs
without that server's tools and only says so in the ``init`` line (``mcp_servers`` with
``status: failed``). :func:`unavailable_servers` reads that, so the backend can stop the run
instead of scoring attempts that never had the tools.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from caliper.attempt import AttemptSandbox, McpServerConfig, NativeMcpConfig
from caliper.backend import McpTranslator

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
        path = sandbox.private / CONFIG_NAME
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(config, handle, indent=2)
        path.chmod(0o600)
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
    """Why the run stops: which servers, and what to check."""
    listed = ", ".join(f"{name!r} ({status})" for name, status in servers)
    return (
        f"Claude Code could not use the spec's MCP server(s) {listed}, so the attempt would run "
        "without their tools. Check the server's url and headers (and the variables they "
        "refer to) or its command, and that the server is up and accepts them."
    )
