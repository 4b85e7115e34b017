"""A remote (Streamable HTTP) MCP server, end to end through ``caliper run`` and real ``hermes``.

The spec's ``type: http`` server has ``Authorization: Bearer ${VAR}``; caliper writes
``mcp_servers:`` into the attempt's ``config.yaml`` with ``url``/``headers`` as
``${CALIPER_MCP_SECRET_n}`` references, and the values travel only in Hermes' environment. See
:mod:`caliper.testing.remote_mcp` for what is checked.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_hermes_conformance import TestHermesConformance as _Conformance

from caliper.testing.conformance import ConformanceKit
from caliper.testing.harness import AgentCli, FakeRealHome
from caliper.testing.remote_mcp import (
    call_dict,
    check_remote_mcp_tool_call,
    check_unusable_server_stops_run,
)

pytest_plugins = ["caliper.testing.fixtures"]

pytestmark = pytest.mark.e2e


@pytest.fixture
def kit(tmp_path: Path, agent_cli: Callable[[str], AgentCli]) -> Iterator[ConformanceKit]:
    """The conformance kit configured as the Hermes conformance suite is."""
    suite = _Conformance()
    made = ConformanceKit(
        suite, tmp_path, FakeRealHome(tmp_path / "real-home"), agent_cli("hermes")
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


def test_stdio_server_that_cannot_start_stops_the_run(kit: ConformanceKit) -> None:
    """A stdio server whose command exits at once stops the run (exit 3), naming it."""
    mcp = {"broken": {"command": sys.executable, "args": ["-c", "raise SystemExit(4)"]}}
    task = {"name": "broken-mcp", "prompt": "Echo it.", "assert": "assert True"}
    call = call_dict(kit.suite.mcp_call("broken", "echo", {"text": "x"}))
    server = kit.server(kit.script([{"tool_calls": [call]}, {"text": "Echoed."}]))
    run = kit.run(kit.spec([task], mcp=mcp), server)
    assert run.returncode == 3, run.describe()
    assert "'broken'" in run.stderr, run.describe()
    assert "Traceback" not in run.stderr + run.stdout
    assert not any(a["outcome"] == "pass" for a in run.attempts()), run.describe()
