"""The standard backend conformance suite, run through ``caliper run`` on the pinned pi.

pi has no MCP: the kit's MCP test checks that such a spec is refused before any attempt.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from caliper.judge import LLM_JUDGE_MARKER
from caliper.testing.conformance import BackendConformance, ToolCall, ok_run

pytest_plugins = ["caliper.testing.fixtures"]

pytestmark = pytest.mark.e2e


class TestPiConformance(BackendConformance):
    """pi 0.74.2 speaking Chat Completions to the scripted model server."""

    backend_id = "pi"
    wire_api = "chat"
    model_for_tests = "fake-model"

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str] | None:
        agent = home / ".pi" / "agent"
        agent.mkdir(parents=True, exist_ok=True)
        models = {
            "providers": {
                "fake": {
                    "baseUrl": f"{server_url}/v1",
                    "api": "openai-completions",
                    "apiKey": "sk-conformance",
                    "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                    "models": [{"id": "fake-model", "contextWindow": 128000, "maxTokens": 4096}],
                }
            }
        }
        (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
        settings = {"defaultProvider": "fake", "defaultModel": "fake-model"}
        (agent / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        return None

    def activate_skill_call(self, name: str) -> ToolCall:
        return ToolCall(name="read", arguments={"path": f"{{{{skill_path:{name}}}}}"})

    def shell_call(self, command: str) -> ToolCall:
        return ToolCall(name="bash", arguments={"command": command})

    def mcp_call(self, server: str, tool: str, arguments: Mapping[str, Any]) -> ToolCall:
        raise AssertionError("pi has no MCP; the kit must not ask for an MCP call")

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
