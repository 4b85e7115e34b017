"""A remote (Streamable HTTP) MCP server, end to end through ``caliper run`` and real pi 1.x.

The spec's ``type: http`` server has ``Authorization: Bearer ${VAR}``; caliper links a private
``mcp.json`` into pi's agent dir with the literal ``url``, ``"exposure": "direct"`` and the
header as a ``${CALIPER_MCP_SECRET_n}`` reference that pi expands from its environment.
Only pi's 1.x line (the pinned 1.6.0, ``pi-current``) has MCP. See
:mod:`caliper.testing.remote_mcp` for what is checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_pi_conformance import TestPiCurrentConformance as _Conformance

from caliper.testing.conformance import ConformanceKit
from caliper.testing.harness import AgentCli, FakeRealHome
from caliper.testing.remote_mcp import (
    check_remote_mcp_tool_call,
    check_unusable_server_stops_run,
)

pytest_plugins = ["caliper.testing.fixtures"]

pytestmark = pytest.mark.e2e


@pytest.fixture
def kit(tmp_path: Path, agent_cli: Callable[[str], AgentCli]) -> Iterator[ConformanceKit]:
    """The conformance kit configured as the pi-current conformance suite is."""
    suite = _Conformance()
    made = ConformanceKit(
        suite, tmp_path, FakeRealHome(tmp_path / "real-home"), agent_cli("pi-current")
    )
    yield made
    made.close()


@pytest.mark.parametrize("answer", ["json", "sse"])
def test_remote_mcp_tool_call_with_header_secret(kit: ConformanceKit, answer: str) -> None:
    """The tool is called over HTTP with the resolved header; the secret is saved nowhere.

    The server answers POSTs as plain JSON, then (``sse``) as SSE streams.
    """
    check_remote_mcp_tool_call(kit, sse=answer == "sse")


@pytest.mark.xfail(
    reason=(
        "pi 1.6 goes on without a remote MCP server it cannot reach or that refuses "
        "the token; in --print --mode json the failure is only a UI notice, absent "
        "from the event stream, so caliper cannot tell yet"
    ),
    strict=True,
)
@pytest.mark.parametrize("why", ["refused", "down"])
def test_unusable_remote_server_stops_the_run(kit: ConformanceKit, why: str) -> None:
    """A server refusing the token, or not listening, stops the run before scoring."""
    check_unusable_server_stops_run(kit, why)
