"""A remote (Streamable HTTP) MCP server, end to end through ``caliper run`` and real ``codex``.

The spec's ``type: http`` server has ``Authorization: Bearer ${VAR}``; caliper resolves it and
writes ``[mcp_servers.<name>] url = … http_headers = {…}`` into the attempt's private
``config.toml``; the model calls the tool in Codex's namespace form (``mcp__<server>``). See
:mod:`caliper.testing.remote_mcp` for what is checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_codex_conformance import TestCodexConformance as _Conformance

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
    """The conformance kit configured as the Codex conformance suite is."""
    suite = _Conformance()
    made = ConformanceKit(suite, tmp_path, FakeRealHome(tmp_path / "real-home"), agent_cli("codex"))
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
