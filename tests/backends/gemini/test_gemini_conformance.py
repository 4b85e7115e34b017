"""The standard backend tests, run against the real pinned ``gemini`` and the scripted server.

Gemini CLI is pointed at the scripted Gemini-protocol server by ``GOOGLE_GEMINI_BASE_URL``,
with an API key in ``GEMINI_API_KEY`` (both forwarded by the backend).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from caliper_backend_gemini.testing import MODEL, GeminiScripted

pytest_plugins = ["caliper.testing.fixtures"]
pytestmark = pytest.mark.e2e  # every test here drives a real agent CLI


class TestGeminiConformance(GeminiScripted):
    """Gemini CLI 0.61.0 through ``caliper run``."""

    __test__ = True

    def test_gemini_as_the_judge(self, kit: Any) -> None:
        """``--judge-model gemini``: the judge's JSON verdict decides the outcome."""
        verdict = '{"passed": false, "reasoning": "The answer says 41, not 42."}'
        server = kit.server(
            kit.script([{"text": "It is 41."}], rules=[{"when": {"judge": True}, "text": verdict}])
        )
        spec = kit.spec([{"name": "judged", "prompt": "Six times seven?", "expect": "Says 42."}])
        run = kit.run(spec, server, "--judge-model", f"gemini:{MODEL}")
        assert run.results is not None, run.describe()
        attempt = run.attempt
        assert attempt["outcome"] == "task_fail", run.describe()
        assert "41, not 42" in json.dumps(attempt["checks"]), attempt["checks"]
        judge_requests = [r for r in server.model_requests() if "Says 42." in r.sent_text()]
        assert judge_requests, "the judge never reached the model server"
