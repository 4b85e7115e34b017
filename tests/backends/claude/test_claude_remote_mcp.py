"""A remote (Streamable HTTP) MCP server, end to end through ``caliper run`` and real ``claude``.

The spec's ``type: http`` server has ``Authorization: Bearer ${VAR}``; caliper resolves it and
hands Claude Code a private ``--mcp-config`` with ``type: http``. See
:mod:`caliper.testing.remote_mcp` for what is checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_claude_conformance import TestClaudeCodeConformance as _Conformance

from caliper.testing.conformance import ConformanceKit
from caliper.testing.harness import AgentCli, FakeRealHome
from caliper.testing.remote_mcp import (
    check_remote_mcp_tool_call,
    check_unusable_server_stops_run,
)
from caliper_backend_claude.mcp import unavailable_message, unavailable_servers

pytest_plugins = ["caliper.testing.fixtures"]

pytestmark = pytest.mark.e2e


@pytest.fixture
def kit(tmp_path: Path, agent_cli: Callable[[str], AgentCli]) -> Iterator[ConformanceKit]:
    """The conformance kit configured as the Claude Code conformance suite is."""
    suite = _Conformance()
    made = ConformanceKit(
        suite, tmp_path, FakeRealHome(tmp_path / "real-home"), agent_cli("claude")
    )
    yield made
    made.close()


@pytest.mark.parametrize("answer", ["json", "sse"])
def test_remote_mcp_tool_call_with_header_secret(kit: ConformanceKit, answer: str) -> None:
    """The tool is called over HTTP with the resolved header; the secret is saved nowhere.

    The server answers POSTs as plain JSON, then (``sse``) as SSE streams.
    """
    check_remote_mcp_tool_call(kit, sse=answer == "sse")


@pytest.mark.parametrize("why", ["refused", "down"])
def test_unusable_remote_server_stops_the_run(kit: ConformanceKit, why: str) -> None:
    """A server refusing the token, or not listening, stops the run before scoring."""
    check_unusable_server_stops_run(kit, why)


def test_unavailable_servers_read_from_the_init_line() -> None:
    """Only ``failed``/``needs-auth`` count; a missing or odd list is no failure."""
    init = {
        "mcp_servers": [
            {"name": "up", "status": "connected"},
            {"name": "slow", "status": "pending"},
            {"name": "down", "status": "failed"},
            {"name": "locked", "status": "needs-auth"},
            "garbage",
        ]
    }
    assert unavailable_servers(init) == [("down", "failed"), ("locked", "needs-auth")]
    assert unavailable_servers(None) == []
    assert unavailable_servers({"mcp_servers": "x"}) == []
    said = unavailable_message([("down", "failed")])
    assert "'down' (failed)" in said and "url and headers" in said
