"""The standard backend tests, run against the real pinned ``codex`` and the scripted server.

The user's Codex is configured the way a company gateway would be: a custom model provider
in ``~/.codex/config.toml`` whose ``base_url`` points at the scripted server and whose key
comes from an ``env_key`` variable (which the backend forwards).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from codex_support import KEY_VARIABLE, MODEL, user_config

from caliper.testing.conformance import BackendConformance
from caliper.testing.script import ToolCall

pytest_plugins = ["caliper.testing.fixtures"]
pytestmark = pytest.mark.e2e  # every test here drives a real agent CLI


class TestCodexConformance(BackendConformance):
    """Codex 0.171.0 through ``caliper run``."""

    backend_id = "codex"
    wire_api = "responses"
    model_for_tests = MODEL

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str] | None:
        # A real home has ~/.cache already; without it the snapshot reports the folder that
        # caliper's own entry-point cache creates (.cache/python-entrypoints) as a change.
        (home / ".cache").mkdir(exist_ok=True)
        folder = home / ".codex"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.toml").write_text(user_config(server_url), encoding="utf-8")
        return {KEY_VARIABLE: "sk-test"}

    def activate_skill_call(self, name: str) -> ToolCall:
        return ToolCall("exec_command", {"cmd": f"cat {{{{skill_path:{name}}}}}"})

    def shell_call(self, command: str) -> ToolCall:
        return ToolCall("exec_command", {"cmd": command})

    def mcp_call(self, server: str, tool: str, arguments: Mapping[str, Any]) -> ToolCall:
        return ToolCall(tool, dict(arguments), namespace=f"mcp__{server}")

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
