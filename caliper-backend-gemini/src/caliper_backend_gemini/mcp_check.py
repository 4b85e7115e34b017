"""The pre-flight MCP check: ``gemini mcp list`` against the spec's servers, once per run.

Gemini CLI only warns on stderr when an MCP server cannot be reached and runs on without its
tools, so before any attempt the servers are written into a throw-away home (secrets as
references, values in the environment only) and ``gemini mcp list`` is asked which connect.
It prints one line per server: ``✓ name: … - Connected`` or ``✗ name: … - Disconnected``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path

from caliper.plugin import SetupError, run_process
from caliper.plugin.attempt import McpServerConfig
from caliper.plugin.mcp import EnvReferences
from caliper.plugin.mcp_unusable import unusable_mcp_message
from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper_backend_gemini.home import FORWARDED, QUIET, base_settings, check_no_references
from caliper_backend_gemini.mcp import server_entry

LIST_TIMEOUT = 60.0
_LINE = re.compile(r"^\s*\S+\s+(?P<name>[^:\s]+):.* - (?P<state>\w+)\s*$")


def server_states(output: str) -> dict[str, str]:
    """``name -> state`` (``Connected``, ``Disconnected``, ...) from ``gemini mcp list``."""
    states: dict[str, str] = {}
    for line in output.splitlines():
        found = _LINE.match(line)
        if found:
            states[found.group("name")] = found.group("state")
    return states


def unusable(servers: Sequence[McpServerConfig], states: dict[str, str]) -> list[str]:
    """The servers ``gemini mcp list`` did not report as connected, in spec order."""
    return [s.name for s in servers if states.get(s.name) != "Connected"]


def check_servers(cli: Path, servers: Sequence[McpServerConfig]) -> None:
    """Raise :class:`SetupError` (exit 3) naming every server Gemini CLI cannot connect to.

    The throw-away home is a ledgered sandbox and ``gemini mcp list`` runs through
    :func:`~caliper.plugin.run_process`, so a stop or a killed run ends the stdio servers it
    started and leaves nothing behind."""
    secret = EnvReferences(empty_as_literal=True)
    entries = {server.name: server_entry(server, secret) for server in servers}
    sandbox = make_sandbox(spec_dir=Path.cwd(), prefix="caliper-gemini-mcp-")
    try:
        (sandbox.home / ".gemini").mkdir(parents=True, exist_ok=True)
        settings = {**base_settings("gemini-api-key"), "mcpServers": entries}
        check_no_references(settings)
        (sandbox.home / ".gemini" / "settings.json").write_text(
            json.dumps(settings), encoding="utf-8"
        )
        home = str(sandbox.home)
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
        env.update({n: os.environ[n] for n in FORWARDED if os.environ.get(n)})
        env.update({**QUIET, **secret.env, "HOME": home, "GEMINI_CLI_HOME": home})
        env.setdefault("GEMINI_API_KEY", "caliper-mcp-check")
        try:
            done = run_process(
                [str(cli), "mcp", "list"], env=env, cwd=sandbox.workdir, timeout=LIST_TIMEOUT
            )
        except OSError as exc:
            message = f"`gemini mcp list` could not check the spec's MCP servers: {exc}"
            raise SetupError(message) from None
    finally:
        remove_sandbox(sandbox)
    if done.timed_out:
        raise SetupError(
            f"`gemini mcp list` did not answer within {LIST_TIMEOUT:.0f} s, so the spec's MCP "
            "servers could not be checked."
        )
    missing = unusable(servers, server_states(done.stdout + "\n" + done.stderr))
    if missing:
        raise SetupError(
            unusable_mcp_message(
                "Gemini CLI",
                [(name, None) for name in missing],
                look_closer="`gemini mcp list` with the same settings shows each server's state.",
            )
        )
