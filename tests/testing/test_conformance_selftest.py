"""The conformance kit run end to end against a real backend (Claude Code, the first ready).

This proves the kit itself: if these pass, the fixtures, the scripted server and the standard
tests work with a real CLI. Backends run the same tests from ``tests/backends/<x>/``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from caliper.testing.conformance import BackendConformance
from caliper.testing.script import ToolCall

pytest_plugins = ["caliper.testing.fixtures"]
pytestmark = pytest.mark.e2e  # every test here drives a real agent CLI


class TestClaudeThroughTheKit(BackendConformance):
    """Claude Code configured the way a user would: ``env`` in ``~/.claude/settings.json``."""

    backend_id = "claude-code"
    cli = "claude"
    wire_api = "anthropic"
    model_for_tests = "claude-sonnet-4-5"

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str] | None:
        settings = home / ".claude" / "settings.json"
        settings.parent.mkdir(parents=True, exist_ok=True)
        env = {
            "ANTHROPIC_BASE_URL": server_url,
            "ANTHROPIC_API_KEY": "sk-test",
            "CLAUDE_CODE_MAX_RETRIES": "0",
        }
        settings.write_text(json.dumps({"env": env}), encoding="utf-8")
        return None

    def activate_skill_call(self, name: str) -> ToolCall:
        return ToolCall("Skill", {"skill": name})

    def shell_call(self, command: str) -> ToolCall:
        return ToolCall("Bash", {"command": command})

    def mcp_call(self, server: str, tool: str, arguments: Mapping[str, Any]) -> ToolCall:
        return ToolCall(f"mcp__{server}__{tool}", dict(arguments))

    def test_the_kit_notices_wrong_behaviour(self, kit: Any) -> None:
        """The standard tests can fail: a wrong skill choice or wrong usage is caught."""

        class WrongSkill(TestClaudeThroughTheKit):
            def activate_skill_call(self, name: str) -> ToolCall:
                return ToolCall("Skill", {"skill": "beta-neighbour"})

        class WrongUsage(TestClaudeThroughTheKit):
            def expected_usage(self, scripted: Any) -> dict[str, int | None]:
                return {**super().expected_usage(scripted), "output_tokens": scripted.output + 1}

        with pytest.raises(AssertionError, match="alpha-target"):
            WrongSkill().test_skill_discovered_and_activated(kit)
        with pytest.raises(AssertionError):
            WrongUsage().test_usage_parsed_and_normalised(kit)
