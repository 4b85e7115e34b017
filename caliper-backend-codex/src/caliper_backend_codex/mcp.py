"""Turning a spec's MCP servers into ``[mcp_servers.<name>]`` tables of Codex's config.toml.

The translator only builds the tables (``NativeMcpConfig.data``); the backend merges them into
the attempt's ``config.toml`` (in the attempt's CODEX_HOME) when it writes it, replacing every
server of the user's own config. Servers are ``required``, so one that fails to start stops
the run loudly instead of silently leaving the agent without its tools. Codex speaks
streamable HTTP only, so ``http`` and ``sse`` both map to a ``url``.

The secret rule (see :class:`caliper.plugin.backend.McpTranslator`): no resolved value is written
into the config. Codex refers to environment variables by bare name, so header values become
``env_http_headers = {Header = "CALIPER_MCP_SECRET_n"}``, and a stdio server's ``env`` values
travel as ``CALIPER_MCP_SECRET_n`` variables that Codex forwards to it (``env_vars``) and a
one-line ``/bin/sh`` wrapper exports under the server's own names. The values are in
``NativeMcpConfig.env``, which the backend passes in Codex's environment only. (A ``url`` is
written as it is: Codex expands no references in it, so keep secrets in headers.)
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from caliper.plugin.attempt import AttemptSandbox, McpServerConfig, NativeMcpConfig
from caliper.plugin.backend import McpTranslator
from caliper.plugin.mcp import EnvReferences

REFERENCE = "NAME"
"""Codex's reference syntax: a variable's bare name (``env_http_headers``, ``env_vars``)."""
SHELL = "/bin/sh"
WRAPPER_NAME = "caliper-mcp-env"
"""``$0`` of the wrapper shell, so a process listing says what it is."""


def _env_wrapper(server: McpServerConfig, secret: EnvReferences) -> dict[str, Any]:
    """A stdio table that starts ``server`` with its env values taken from Codex's env."""
    names = {key: secret(value) for key, value in server.env.items()}
    assignments = " ".join(
        f'{shlex.quote(key + "=")}"${name}"' if name else shlex.quote(key + "=")
        for key, name in names.items()
    )
    return {
        "command": SHELL,
        "args": ["-c", f'exec env {assignments} "$@"', WRAPPER_NAME, server.command or "",
                 *server.args],
        "env_vars": [name for name in names.values() if name],
    }  # fmt: skip


def server_table(server: McpServerConfig, secret: EnvReferences) -> dict[str, Any]:
    """One ``[mcp_servers.<name>]`` table, its secrets recorded in ``secret``."""
    if server.transport == "stdio":
        if server.env:
            table = _env_wrapper(server, secret)
        else:
            table = {"command": server.command or "", "args": list(server.args)}
    else:
        table = {"url": server.url or ""}
        headers = {key: secret(value) for key, value in server.headers.items()}
        if any(headers.values()):
            table["env_http_headers"] = {k: name for k, name in headers.items() if name}
        if not all(headers.values()):
            table["http_headers"] = {k: "" for k, name in headers.items() if not name}
    table["required"] = True
    return table


def tables_of(native: NativeMcpConfig | None) -> Mapping[str, Mapping[str, Any]]:
    """The tables a translator produced (empty when the spec declares no servers)."""
    if native is None or not isinstance(native.data, Mapping):
        return {}
    return native.data


class CodexMcpTranslator(McpTranslator):
    """Builds the tables; the secrets go in ``env``, for Codex's environment only."""

    id = "codex"

    def translate(
        self, servers: Sequence[McpServerConfig], sandbox: AttemptSandbox
    ) -> NativeMcpConfig:
        # An empty value is written as "" (nothing to hide; an empty variable may read as unset).
        secret = EnvReferences(empty_as_literal=True, template=REFERENCE)
        tables = {server.name: server_table(server, secret) for server in servers}
        return NativeMcpConfig(env=secret.env, data=tables)
