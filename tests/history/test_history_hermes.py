"""A task's `history:` planted in Hermes' own session store and resumed (real `hermes`, e2e)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from history_support import PlantedConversationCase

from caliper.plugin.conversation import AssistantTurn, PlantedConversation, ShellTurn, UserTurn
from caliper_backend_hermes import conversation as hermes_conversation
from caliper_backend_hermes.testing import HermesScripted

pytest_plugins = ["caliper.testing.fixtures"]


class HermesSuite(HermesScripted):
    """The hermes conformance configuration: a custom OpenAI endpoint in config.yaml."""

    api_key = "sk-history"


@pytest.mark.e2e
class TestHermesPlantedConversation(PlantedConversationCase):
    suite = HermesSuite()
    cli = "hermes"
    shell_tool = "terminal"

    def test_the_model_sees_the_planted_turns_and_the_prompt_last(self, kit: Any) -> None:
        self.check_planted_run(kit)


def test_messages_follow_hermes_tool_call_shape(tmp_path):
    history = PlantedConversation(
        path=tmp_path / "h.yaml",
        declared_as="h.yaml",
        sha256="12" * 32,
        turns=(UserTurn("hi"), AssistantTurn("running"), ShellTurn("false", "x", 1)),
    )
    messages = hermes_conversation.session_messages(history)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    (call,) = messages[1]["tool_calls"]
    assert messages[1]["content"] == "running"
    assert call["function"]["name"] == "terminal"
    assert json.loads(call["function"]["arguments"]) == {"command": "false"}
    assert messages[2]["tool_call_id"] == call["id"]
    assert json.loads(messages[2]["content"]) == {"output": "x", "exit_code": 1, "error": None}
    kept = hermes_conversation.without_planted([*messages, {"role": "user", "content": "new"}], 3)
    assert kept == ({"role": "user", "content": "new"},)
