"""The standard backend conformance suite, run through ``caliper run`` on the pinned Hermes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from caliper.testing.conformance import BackendConformance, ToolCall

pytest_plugins = ["caliper.testing.fixtures"]

pytestmark = pytest.mark.e2e


class TestHermesConformance(BackendConformance):
    """Hermes 0.19.0 speaking Chat Completions to the scripted model server."""

    backend_id = "hermes"
    wire_api = "chat"
    model_for_tests = "caliper-test-model"

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str] | None:
        hermes = home / ".hermes"
        hermes.mkdir(parents=True, exist_ok=True)
        (hermes / "config.yaml").write_text(
            "model:\n"
            "  provider: custom\n"
            "  default: caliper-test-model\n"
            f"  base_url: {server_url}/v1\n"
            "  api_key: sk-conformance\n"
            "  context_length: 128000\n",
            encoding="utf-8",
        )
        return None

    def aux_rules(self) -> list[dict[str, Any]]:
        return [{"when": {"no_tools": True}, "text": "Approved."}]

    def activate_skill_call(self, name: str) -> ToolCall:
        return ToolCall(name="skill_view", arguments={"name": name})

    def shell_call(self, command: str) -> ToolCall:
        return ToolCall(name="terminal", arguments={"command": command})

    def mcp_call(self, server: str, tool: str, arguments: Mapping[str, Any]) -> ToolCall:
        return ToolCall(name=f"mcp__{server}__{tool}", arguments=dict(arguments))
