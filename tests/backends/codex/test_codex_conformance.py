"""The standard backend tests, run against the real pinned ``codex`` and the scripted server.

The user's Codex is configured the way a company gateway would be: a custom model provider
in ``~/.codex/config.toml`` whose ``base_url`` points at the scripted server and whose key
comes from an ``env_key`` variable (which the backend forwards).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from caliper_backend_codex.testing import MODEL, CodexScripted

pytest_plugins = ["caliper.testing.fixtures"]
pytestmark = pytest.mark.e2e  # every test here drives a real agent CLI


class TestCodexConformance(CodexScripted):
    """Codex 0.171.0 through ``caliper run``."""

    __test__ = True

    def test_codex_as_the_judge(self, kit: Any) -> None:
        """``--judge-model codex``: the judge's JSON verdict decides the outcome."""
        verdict = '{"passed": false, "reasoning": "The answer says 41, not 42."}'
        server = kit.server(
            kit.script([{"text": "It is 41."}], rules=[{"when": {"judge": True}, "text": verdict}])
        )
        spec = kit.spec([{"name": "judged", "prompt": "Six times seven?", "expect": "Says 42."}])
        run = kit.run(spec, server, "--judge-model", f"codex:{MODEL}")
        assert run.results is not None, run.describe()
        attempt = run.attempt
        assert attempt["outcome"] == "task_fail", run.describe()
        assert "41, not 42" in json.dumps(attempt["checks"]), attempt["checks"]
        judge_requests = [r for r in server.model_requests() if "Says 42." in r.sent_text()]
        assert judge_requests, "the judge never reached the model server"
        assert "read-only" in judge_requests[0].sent_text()
        assert run.results["meta"]["judge_backend"] == "codex", run.results["meta"]
