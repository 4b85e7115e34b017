"""The standard backend conformance tests, run through ``caliper run`` with the real ``claude``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from caliper.testing.conformance import BackendConformance, ToolCall

pytest_plugins = ["caliper.testing.fixtures"]

pytestmark = pytest.mark.e2e


class TestClaudeCodeConformance(BackendConformance):
    backend_id = "claude-code"
    cli = "claude"
    wire_api = "anthropic"
    model_for_tests = "claude-sonnet-4-5"

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str]:
        # An API-key user: nothing in the home, the key and gateway in the environment.
        return {
            "ANTHROPIC_BASE_URL": server_url,
            "ANTHROPIC_API_KEY": "sk-conformance",
            "CLAUDE_CODE_MAX_RETRIES": "0",
        }

    def activate_skill_call(self, name: str) -> ToolCall:
        return ToolCall("Skill", {"skill": name})

    def shell_call(self, command: str) -> ToolCall:
        return ToolCall("Bash", {"command": command, "description": "run the command"})

    def mcp_call(self, server: str, tool: str, arguments: Mapping[str, Any]) -> ToolCall:
        return ToolCall(f"mcp__{server}__{tool}", dict(arguments))
