"""Claude Code configured for Caliper's scripted model server, for conformance-style tests.

Subclass :class:`ClaudeScripted` in a test module (set ``__test__ = True`` or name the class
``Test…``) to run the kit, or instantiate it to drive :class:`caliper.testing.conformance.
ConformanceKit` directly. Requires ``caliper-core[testing]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from caliper.testing.conformance import BackendConformance, ToolCall


class ClaudeScripted(BackendConformance):
    """An API-key user: nothing in the home; the key and the gateway in the environment."""

    __test__ = False
    backend_id = "claude-code"
    cli = "claude"
    wire_api = "anthropic"
    model_for_tests = "claude-sonnet-4-5"
    api_key = "sk-conformance"

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str]:
        """Point claude at ``server_url`` through its environment (no retries)."""
        return {
            "ANTHROPIC_BASE_URL": server_url,
            "ANTHROPIC_API_KEY": self.api_key,
            "CLAUDE_CODE_MAX_RETRIES": "0",
        }

    def activate_skill_call(self, name: str) -> ToolCall:
        """claude loads a skill with its ``Skill`` tool."""
        return ToolCall("Skill", {"skill": name})

    def shell_call(self, command: str) -> ToolCall:
        """claude's shell tool."""
        return ToolCall("Bash", {"command": command, "description": "run the command"})

    def mcp_call(self, server: str, tool: str, arguments: Mapping[str, Any]) -> ToolCall:
        """claude names MCP tools ``mcp__<server>__<tool>``."""
        return ToolCall(f"mcp__{server}__{tool}", dict(arguments))
