"""Hermes configured for Caliper's scripted model server, for conformance-style tests.

The user's Hermes has a ``custom`` provider in ``~/.hermes/config.yaml`` pointing at the
scripted server (Chat Completions). Requires ``caliper-core[testing]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from caliper.testing.conformance import BackendConformance, ToolCall

MODEL = "caliper-test-model"


class HermesScripted(BackendConformance):
    """Hermes speaking Chat Completions to the scripted model server."""

    __test__ = False
    backend_id = "hermes"
    cli = "hermes"
    wire_api = "chat"
    model_for_tests = MODEL
    api_key = "sk-conformance"

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str] | None:
        """Write the ``custom`` provider into ``~/.hermes/config.yaml``."""
        hermes = home / ".hermes"
        hermes.mkdir(parents=True, exist_ok=True)
        (hermes / "config.yaml").write_text(
            "model:\n"
            "  provider: custom\n"
            f"  default: {MODEL}\n"
            f"  base_url: {server_url}/v1\n"
            f"  api_key: {self.api_key}\n"
            "  context_length: 128000\n",
            encoding="utf-8",
        )
        return None

    def aux_rules(self) -> list[dict[str, Any]]:
        """Hermes' own tool-less side calls (titles, summaries) get a short answer."""
        return [{"when": {"no_tools": True}, "text": "Approved."}]

    def activate_skill_call(self, name: str) -> ToolCall:
        """Hermes loads a skill with ``skill_view``."""
        return ToolCall(name="skill_view", arguments={"name": name})

    def shell_call(self, command: str) -> ToolCall:
        """Hermes' shell tool."""
        return ToolCall(name="terminal", arguments={"command": command})

    def mcp_call(self, server: str, tool: str, arguments: Mapping[str, Any]) -> ToolCall:
        """Hermes names MCP tools ``mcp__<server>__<tool>``."""
        return ToolCall(name=f"mcp__{server}__{tool}", arguments=dict(arguments))
