"""A task's `history:` planted in Hermes' own session store and resumed (real `hermes`, e2e)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from history_support import PlantedHistoryCase

from caliper.history import AssistantTurn, History, ShellTurn, UserTurn
from caliper.testing.conformance import BackendConformance, ToolCall
from caliper_backend_hermes import history as hermes_history

pytest_plugins = ["caliper.testing.fixtures"]


class HermesSuite(BackendConformance):
    """The hermes conformance configuration: a custom OpenAI endpoint in config.yaml."""

    __test__ = False
    backend_id = "hermes"
    wire_api = "chat"

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str] | None:
        hermes = home / ".hermes"
        hermes.mkdir(parents=True, exist_ok=True)
        (hermes / "config.yaml").write_text(
            "model:\n"
            "  provider: custom\n"
            "  default: caliper-test-model\n"
            f"  base_url: {server_url}/v1\n"
            "  api_key: sk-history\n"
            "  context_length: 128000\n",
            encoding="utf-8",
        )
        return None

    def aux_rules(self) -> list[dict[str, Any]]:
        return [{"when": {"no_tools": True}, "text": "Approved."}]

    def shell_call(self, command: str) -> ToolCall:
        return ToolCall(name="terminal", arguments={"command": command})


@pytest.mark.e2e
class TestHermesPlantedHistory(PlantedHistoryCase):
    suite = HermesSuite()
    cli = "hermes"
    shell_tool = "terminal"

    def test_the_model_sees_the_planted_turns_and_the_prompt_last(self, kit: Any) -> None:
        self.check_planted_run(kit)


def test_messages_follow_hermes_tool_call_shape(tmp_path):
    history = History(
        path=tmp_path / "h.yaml",
        declared_as="h.yaml",
        sha256="12" * 32,
        turns=(UserTurn("hi"), AssistantTurn("running"), ShellTurn("false", "x", 1)),
    )
    messages = hermes_history.session_messages(history)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    (call,) = messages[1]["tool_calls"]
    assert messages[1]["content"] == "running"
    assert call["function"]["name"] == "terminal"
    assert json.loads(call["function"]["arguments"]) == {"command": "false"}
    assert messages[2]["tool_call_id"] == call["id"]
    assert json.loads(messages[2]["content"]) == {"output": "x", "exit_code": 1, "error": None}
    kept = hermes_history.without_planted([*messages, {"role": "user", "content": "new"}], 3)
    assert kept == ({"role": "user", "content": "new"},)
