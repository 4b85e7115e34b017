"""A task's `history:` planted as a Claude Code session and resumed (real `claude`, e2e)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from history_support import PlantedConversationCase

from caliper.plugin.conversation import PlantedConversation, ShellTurn, UserTurn
from caliper.testing.conformance import BackendConformance, ToolCall
from caliper_backend_claude import conversation as claude_conversation

pytest_plugins = ["caliper.testing.fixtures"]


class ClaudeSuite(BackendConformance):
    """The claude conformance configuration (an API-key user), without its tests."""

    __test__ = False
    backend_id = "claude-code"
    cli = "claude"
    wire_api = "anthropic"
    model_for_tests = "claude-sonnet-4-5"

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str]:
        return {
            "ANTHROPIC_BASE_URL": server_url,
            "ANTHROPIC_API_KEY": "sk-history",
            "CLAUDE_CODE_MAX_RETRIES": "0",
        }

    def shell_call(self, command: str) -> ToolCall:
        return ToolCall("Bash", {"command": command, "description": "run the command"})


@pytest.mark.e2e
class TestClaudePlantedConversation(PlantedConversationCase):
    suite = ClaudeSuite()
    cli = "claude"
    shell_tool = "Bash"

    def test_the_model_sees_the_planted_turns_and_the_prompt_last(self, kit: Any) -> None:
        self.check_planted_run(kit)


def test_slug_and_entries_follow_claude_codes_session_format(tmp_path):
    history = PlantedConversation(
        path=tmp_path / "h.yaml",
        declared_as="h.yaml",
        sha256="ab" * 32,
        turns=(UserTurn("hi"), ShellTurn("false", "", 1)),
    )
    assert claude_conversation.project_slug(Path("/tmp/a_b.c/work")) == "-tmp-a-b-c-work"
    entries = claude_conversation.session_entries(history, "sid", Path("/w"))
    assert [e["type"] for e in entries] == ["user", "assistant", "user"]
    assert [e["parentUuid"] for e in entries[1:]] == [e["uuid"] for e in entries[:-1]]
    assert entries[0]["parentUuid"] is None
    result = entries[2]["message"]["content"][0]
    assert result["is_error"] is True and result["content"].startswith("Exit code 1")
    assert result["tool_use_id"] == entries[1]["message"]["content"][0]["id"]
    assert all(e["cwd"] == "/w" and e["sessionId"] == "sid" for e in entries)
    json.dumps(entries)


def test_a_working_directory_too_long_for_a_slug_is_refused():
    from caliper.errors import SetupError

    with pytest.raises(SetupError, match="longer than 200 characters"):
        claude_conversation.project_slug(Path("/" + "x" * 250))


@pytest.mark.e2e
class TestPlantedTurnsAreNotJudged(PlantedConversationCase):
    """A planted shell call that "read" the spec is history, not a cheat by this attempt."""

    suite = ClaudeSuite()
    cli = "claude"
    shell_tool = "Bash"

    def test_a_forbidden_read_in_the_history_is_not_a_cheat(self, kit: Any) -> None:
        (kit.project / "history.yaml").write_text(
            "turns:\n"
            "  - user: show me the spec\n"
            "  - shell: {command: cat conf.eval.yaml, output: 'tasks: []'}\n"
            "  - assistant: That is the spec.\n",
            encoding="utf-8",
        )
        server = kit.server(kit.script([{"text": "Nothing else to read."}]))
        spec = kit.spec(
            [
                {
                    "name": "after a forbidden read",
                    "history": "history.yaml",
                    "prompt": "Thanks, that is all.",
                    "assert": "assert True",
                }
            ]
        )
        run = kit.run(spec, server)
        assert run.returncode == 0, run.describe()
        attempt = run.attempt
        assert attempt["outcome"] == "pass", run.describe()
        assert attempt["forbidden_reads"] == []
        sent = [r.sent_text() for r in server.model_requests()]
        assert any("cat conf.eval.yaml" in text for text in sent), "the history never arrived"
