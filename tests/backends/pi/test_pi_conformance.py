"""The standard backend conformance suite, run through ``caliper run`` on both pinned pis.

pi 0.74.2 (the newest on Node 20) has no MCP: the kit's MCP test checks that such a spec is
refused before any attempt. pi 1.6.0 (Node 24 from PyPI) runs the real MCP tool call.
"""

from __future__ import annotations

import sys

import pytest

from caliper.plugin.judge import LLM_JUDGE_MARKER
from caliper.testing import agent_clis
from caliper.testing.conformance import ok_run
from caliper_backend_pi.testing import PiScripted

pytest_plugins = ["caliper.testing.fixtures"]

pytestmark = pytest.mark.e2e


class PiConformance(PiScripted):
    """pi speaking Chat Completions to the scripted model server (subclassed per pin)."""

    @pytest.fixture(autouse=True)
    def _backend_sees_the_cli_under_test(self, kit, monkeypatch: pytest.MonkeyPatch) -> None:
        """MCP support depends on pi's version: the in-process backend must find this pi too."""
        monkeypatch.setenv("PI_CLI_PATH", str(kit.cli.path))

    def test_pi_as_judge_engine(self, kit) -> None:
        """``--judge-model pi:<model>`` grades an ``expect:`` check through pi, tool-less."""
        verdict = '{"passed": true, "reasoning": "It greeted Ada."}'
        script = kit.script(
            [{"text": "Hello, Ada!"}],
            rules=[{"when": {"judge": True}, "text": verdict}],
        )
        server = kit.server(script)
        spec = kit.spec([{"name": "judged", "prompt": "Greet Ada.", "expect": "greets Ada"}])
        run = kit.run(spec, server, "--judge-model", self.engine())
        attempt = ok_run(run)
        assert attempt["outcome"] == "pass", run.describe()
        judged = [r for r in server.model_requests() if LLM_JUDGE_MARKER in r.sent_text()]
        assert judged, "the judge never reached the model server"
        assert all(not r.body.get("tools") for r in judged)
        assert run.results["meta"]["judge_backend"] == "pi", run.describe()


class TestPiConformance(PiConformance):
    """pi 0.74.2: no MCP, so an ``mcp:`` spec is refused before any attempt."""

    __test__ = True

    cli = "pi"

    def test_mcp_refusal_names_the_version_and_the_way_out(self, kit) -> None:
        """The refusal says which pi was found and how to get one with MCP."""
        assert not self.backend().supports_mcp()
        server = kit.server(kit.script([{"text": "x"}]))
        mcp = {"echo": {"command": sys.executable, "args": ["-m", "caliper.testing.mcp_echo"]}}
        spec = kit.spec([{"name": "mcp", "prompt": "Echo it.", "assert": "assert True"}], mcp=mcp)
        run = kit.run(spec, server)
        assert run.returncode == 2, run.describe()
        said = " ".join(run.stderr.split())
        version = agent_clis.AGENT_CLIS[self.cli or "pi"]["version"]
        assert f"pi {version} (at {kit.cli.path}) has no MCP support" in said, run.describe()
        assert "Node 22.19" in said and "@latest" in said
        assert not server.model_requests()


class TestPiCurrentConformance(PiConformance):
    """pi's current release line (1.6.0, Node 24): the same suite, plus a real MCP tool call."""

    __test__ = True

    cli = "pi-current"
