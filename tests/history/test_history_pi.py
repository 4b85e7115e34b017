"""A task's `history:` planted as a pi session file and continued with `--session` (e2e), on
both pinned pis (0.74.2 and 1.6.0)."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest
from history_support import PlantedConversationCase

from caliper.plugin.conversation import AssistantTurn, PlantedConversation, ShellTurn, UserTurn
from caliper_backend_pi import conversation as pi_conversation
from caliper_backend_pi.testing import PiScripted

pytest_plugins = ["caliper.testing.fixtures"]


class PiSuite(PiScripted):
    """The pi conformance configuration: a ``fake`` provider in the user's models.json."""

    api_key = "sk-history"


@pytest.mark.e2e
class TestPiPlantedConversation(PlantedConversationCase):
    suite = PiSuite()
    cli = "pi"
    shell_tool = "bash"

    def test_the_model_sees_the_planted_turns_and_the_prompt_last(self, kit: Any) -> None:
        self.check_planted_run(kit)


@pytest.mark.e2e
class TestPiCurrentPlantedConversation(TestPiPlantedConversation):
    cli = "pi-current"


def test_session_file_is_a_v3_tree_with_text_and_call_in_one_message(tmp_path):
    history = PlantedConversation(
        path=tmp_path / "h.yaml",
        declared_as="h.yaml",
        sha256="ef" * 32,
        turns=(UserTurn("hi"), AssistantTurn("running"), ShellTurn("false", "", 1)),
    )
    now = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    lines = [
        json.loads(line) for line in pi_conversation.session_lines(history, "sid", Path("/w"), now)
    ]
    assert lines[0] == {
        "type": "session",
        "version": 3,
        "id": "sid",
        "timestamp": "2026-01-02T03:04:05.000Z",
        "cwd": "/w",
    }
    entries = lines[1:]
    assert [e["parentId"] for e in entries] == [None, *[e["id"] for e in entries[:-1]]]
    roles = [e["message"]["role"] for e in entries]
    assert roles == ["user", "assistant", "toolResult"]
    blocks = entries[1]["message"]["content"]
    assert [b["type"] for b in blocks] == ["text", "toolCall"]
    result = entries[2]["message"]
    assert result["toolCallId"] == blocks[1]["id"] and result["isError"] is True
    assert result["content"][0]["text"].endswith("Command exited with code 1")


def test_no_session_is_swapped_for_the_planted_file():
    argv = pi_conversation.session_argv(["pi", "--print", "--no-session", "-x"], Path("/s.jsonl"))
    assert argv == ["pi", "--print", "--session", "/s.jsonl", "-x"]


@pytest.mark.parametrize(
    ("version", "supported"), [("0.74.2", True), ("1.6.0", True), ("0.60.1", False), (None, False)]
)
def test_versions_with_the_v3_session_format(version, supported):
    assert pi_conversation.can_resume(version) is supported
    if not supported:
        assert "0.74" in pi_conversation.refusal(Path("/bin/pi"), version)
