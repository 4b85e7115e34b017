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
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from caliper.plugin import SetupError
from caliper.plugin.attempt import McpServerConfig
from caliper.plugin.mcp import EnvReferences
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
    """Raise :class:`SetupError` (exit 3) naming every server Gemini CLI cannot connect to."""
    secret = EnvReferences(empty_as_literal=True)
    entries = {server.name: server_entry(server, secret) for server in servers}
    with tempfile.TemporaryDirectory(prefix="caliper-gemini-mcp-") as scratch:
        home = Path(scratch) / "home"
        work = Path(scratch) / "work"
        (home / ".gemini").mkdir(parents=True)
        work.mkdir()
        settings = {**base_settings("gemini-api-key"), "mcpServers": entries}
        check_no_references(settings)
        (home / ".gemini" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL")}
        env.update({n: os.environ[n] for n in FORWARDED if os.environ.get(n)})
        env.update({**QUIET, **secret.env, "HOME": str(home), "GEMINI_CLI_HOME": str(home)})
        env.setdefault("GEMINI_API_KEY", "caliper-mcp-check")
        try:
            done = subprocess.run(
                [str(cli), "mcp", "list"], cwd=work, env=env, capture_output=True, text=True,
                timeout=LIST_TIMEOUT, stdin=subprocess.DEVNULL, check=False,
            )  # fmt: skip
        except (OSError, subprocess.TimeoutExpired) as exc:
            message = f"`gemini mcp list` could not check the spec's MCP servers: {exc}"
            raise SetupError(message) from None
    missing = unusable(servers, server_states(done.stdout + "\n" + done.stderr))
    if missing:
        names = ", ".join(repr(name) for name in missing)
        raise SetupError(
            f"Gemini CLI cannot connect to the MCP server{'s' if len(missing) > 1 else ''} "
            f"{names} of the spec, so attempts would run without their tools.",
            hint="Check that the server starts (stdio) or is listening and accepts the spec's "
            "headers (http/sse); `gemini mcp list` with the same settings shows the state.",
        )
