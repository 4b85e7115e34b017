"""A task's `history:` planted as a Gemini CLI saved session and continued with `--resume
latest` (e2e on the pinned gemini), and the session file's shape."""

from __future__ import annotations

import datetime
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from history_support import PlantedConversationCase

from caliper.plugin.conversation import AssistantTurn, PlantedConversation, ShellTurn, UserTurn
from caliper_backend_gemini import conversation as gemini_conversation
from caliper_backend_gemini.testing import GeminiScripted

pytest_plugins = ["caliper.testing.fixtures"]


@pytest.mark.e2e
class TestGeminiPlantedConversation(PlantedConversationCase):
    suite = GeminiScripted()
    cli = "gemini"
    shell_tool = "run_shell_command"

    def test_the_model_sees_the_planted_turns_and_the_prompt_last(self, kit: Any) -> None:
        self.check_planted_run(kit)


def test_session_file_has_the_header_and_the_call_in_the_assistant_message(tmp_path):
    history = PlantedConversation(
        path=tmp_path / "h.yaml",
        declared_as="h.yaml",
        sha256="ef" * 32,
        turns=(UserTurn("hi"), AssistantTurn("running"), ShellTurn("false", "", 1)),
    )
    now = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    lines = [json.loads(x) for x in gemini_conversation.session_lines(history, Path("/w"), now)]
    header = lines[0]
    # sha256("/w"), as Gemini CLI's getProjectHash computes it
    assert header["projectHash"] == hashlib.sha256(b"/w").hexdigest()
    assert header["startTime"] == "2026-01-02T03:04:05.000Z" and header["kind"] == "main"
    assert [m["type"] for m in lines[1:]] == ["user", "gemini"]
    (call,) = lines[2]["toolCalls"]
    assert lines[2]["content"] == "running"
    assert call["name"] == "run_shell_command" and call["args"] == {"command": "false"}
    assert call["status"] == "error"
    output = call["result"][0]["functionResponse"]["response"]["output"]
    assert output.endswith("Exit Code: 1"), output
