"""The conformance kit run end to end against a real backend (Claude Code, the first ready).

This proves the kit itself: if these pass, the fixtures, the scripted server and the standard
tests work with a real CLI. Backends run the same tests from ``tests/backends/<x>/``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from caliper.testing.conformance import BackendConformance
from caliper.testing.script import ToolCall

pytest_plugins = ["caliper.testing.fixtures"]


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
