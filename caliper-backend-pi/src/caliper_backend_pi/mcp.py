"""MCP for pi: which pi versions have it, and the ``mcp.json`` an attempt gets.

caliper gives MCP servers to pi from its 1.x line on (tested on 1.6.0); the 0.7x releases,
the newest that run on Node 20, have no MCP at all. (pi 0.99 introduced it; caliper does not
rely on that pre-1.0 line.) pi reads servers from ``mcp.json`` in its agent
dir. By default a server's tools are reachable only from pi's ``codemode`` scripts; caliper
asks for ``"exposure": "direct"`` so the model sees ``mcp__<server>__<tool>`` like any other
tool, as the other backends show them.

Resolved secrets never reach the agent dir: ``env`` and ``headers`` values are written as
``${CALIPER_MCP_SECRET_<n>}`` references that pi expands from its own environment, and the
file itself (whose ``url`` pi does not expand) lives in the attempt's private folder, linked
from the agent dir.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from caliper.plugin.attempt import AttemptSandbox, McpServerConfig, NativeMcpConfig
from caliper.plugin.backend import McpTranslator
from caliper.plugin.mcp import EnvReferences
from caliper.plugin.private_files import write_secret_file
from caliper_backend_pi.home import agent_dir

MCP_MIN_VERSION = (1, 0, 0)
"""The first pi release line caliper gives MCP servers to."""

CONFIG_NAME = "mcp.json"
PRIVATE_NAME = "pi-mcp.json"

ALTERNATIVES = (
    "Or give the agent the capability another way: ship it as a command-line tool inside "
    "the skill folder and have SKILL.md tell the agent to run it with bash, or run this spec "
    "on another backend with MCP support (--model claude-code, codex or hermes)."
)


def version_tuple(text: str | None) -> tuple[int, ...] | None:
    """``(major, minor, patch)`` from a version string, or None when there is none."""
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text or "")
    return tuple(int(part) for part in match.groups()) if match else None


def has_mcp(version: str | None) -> bool:
    """Whether pi ``version`` has the MCP support caliper relies on."""
    parsed = version_tuple(version)
    return parsed is not None and parsed >= MCP_MIN_VERSION


def refusal(cli: Path | None, version: str | None, update_command: str) -> str:
    """Why this pi cannot get the spec's MCP servers, and what to do about it."""
    upgrade = (
        f"Upgrade pi to its current release line (`{update_command}`; it needs Node 22.19 or "
        "newer), which reads MCP servers from mcp.json."
    )
    if cli is None:
        return f"pi was not found, so caliper cannot tell whether it supports MCP. {upgrade}"
    if version_tuple(version) is None:
        return (
            f"caliper could not read the version of the pi at {cli}, so it cannot tell whether "
            f"that pi supports MCP (caliper uses it from pi 1.0 on). {upgrade} {ALTERNATIVES}"
        )
    return (
        f"pi {version} (at {cli}) has no MCP support that caliper can use (it needs pi 1.0 or "
        f"newer). {upgrade} {ALTERNATIVES}"
    )


class PiMcpTranslator(McpTranslator):
    """Turns the spec's servers into pi's ``mcpServers`` block with direct tool exposure."""

    id = "pi"

    def translate(
        self, servers: Sequence[McpServerConfig], sandbox: AttemptSandbox
    ) -> NativeMcpConfig:
        """``data``: ``{"mcpServers": …, "unsupported": [names]}``; ``env``: the secrets."""
        # pi treats an empty variable as unset; an empty literal means the same.
        secret = EnvReferences(empty_as_literal=True)

        block: dict[str, Any] = {}
        unsupported: list[str] = []
        for server in servers:
            entry: dict[str, Any]
            if server.transport == "stdio":
                entry = {"command": server.command, "args": list(server.args)}
                if server.env:
                    entry["env"] = {key: secret(value) for key, value in server.env.items()}
            else:
                if server.transport == "sse":
                    unsupported.append(server.name)
                entry = {"url": server.url}
                if server.headers:
                    entry["headers"] = {key: secret(v) for key, v in server.headers.items()}
            entry["exposure"] = "direct"
            block[server.name] = entry
        return NativeMcpConfig(
            env=secret.env, data={"mcpServers": block, "unsupported": unsupported}
        )


def unsupported_servers(native: NativeMcpConfig | None) -> list[str]:
    """Servers pi cannot connect to (legacy SSE transport)."""
    if native is None or not isinstance(native.data, dict):
        return []
    return [str(name) for name in native.data.get("unsupported", [])]


def write_config(sandbox: AttemptSandbox, native: NativeMcpConfig) -> Path:
    """Write the attempt's ``mcp.json`` in its private folder; link it from the agent dir."""
    data = native.data if isinstance(native.data, dict) else {}
    text = json.dumps({"mcpServers": data.get("mcpServers", {})}, indent=2) + "\n"
    private = write_secret_file(sandbox, PRIVATE_NAME, text)
    link = agent_dir(sandbox) / CONFIG_NAME
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(private)
    return link
