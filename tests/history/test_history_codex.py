"""A task's `history:` planted as a Codex rollout and resumed with `codex exec resume` (e2e)."""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from history_support import PlantedConversationCase

from caliper.plugin.conversation import AssistantTurn, PlantedConversation, ShellTurn, UserTurn
from caliper.testing.conformance import BackendConformance, ToolCall
from caliper_backend_codex import conversation as codex_conversation

pytest_plugins = ["caliper.testing.fixtures"]

KEY_VARIABLE = "CALIPER_CODEX_HISTORY_KEY"


class CodexSuite(BackendConformance):
    """A user whose ~/.codex/config.toml points a custom provider at the scripted server."""

    __test__ = False
    backend_id = "codex"
    wire_api = "responses"
    model_for_tests = "gpt-5.5"

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str]:
        (home / ".cache").mkdir(parents=True, exist_ok=True)
        folder = home / ".codex"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.toml").write_text(
            f"""model = "gpt-5.5"
model_provider = "scripted"

[model_providers.scripted]
name = "Scripted test server"
base_url = "{server_url}/v1"
wire_api = "responses"
env_key = "{KEY_VARIABLE}"
request_max_retries = 0
stream_max_retries = 0
""",
            encoding="utf-8",
        )
        return {KEY_VARIABLE: "sk-history"}

    def shell_call(self, command: str) -> ToolCall:
        return ToolCall("exec_command", {"cmd": command})


@pytest.mark.e2e
class TestCodexPlantedConversation(PlantedConversationCase):
    suite = CodexSuite()
    cli = "codex"
    shell_tool = "exec_command"

    def test_the_model_sees_the_planted_turns_and_the_prompt_last(self, kit: Any) -> None:
        self.check_planted_run(kit)


def test_rollout_starts_with_session_meta_and_pairs_calls_with_outputs(tmp_path):
    history = PlantedConversation(
        path=tmp_path / "h.yaml",
        declared_as="h.yaml",
        sha256="cd" * 32,
        turns=(UserTurn("hi"), ShellTurn("ls", "a\n", 2), AssistantTurn("ok")),
    )
    now = datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    lines = [
        json.loads(line)
        for line in codex_conversation.rollout_lines(history, "tid", Path("/w"), now)
    ]
    assert lines[0]["type"] == "session_meta"
    assert lines[0]["payload"]["id"] == "tid" and lines[0]["payload"]["cwd"] == "/w"
    payloads = [line["payload"] for line in lines[1:]]
    assert [p["type"] for p in payloads] == [
        "message",
        "function_call",
        "function_call_output",
        "message",
    ]
    assert payloads[1]["call_id"] == payloads[2]["call_id"]
    assert json.loads(payloads[1]["arguments"]) == {"cmd": "ls"}
    assert payloads[2]["output"].startswith("Process exited with code 2\nOutput:\na\n")
    argv = codex_conversation.resume_argv(["codex", "exec", "--json", "-"], "tid")
    assert argv == ["codex", "exec", "--json", "resume", "tid", "-"]
