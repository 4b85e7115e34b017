"""Gemini CLI configured for Caliper's scripted model server, for conformance-style tests.

The user's Gemini CLI is pointed at the scripted server by ``GOOGLE_GEMINI_BASE_URL`` with an
API key in ``GEMINI_API_KEY`` (both forwarded by the backend). Requires ``caliper-core[testing]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from caliper.testing.conformance import BackendConformance, ToolCall

MODEL = "gemini-2.5-pro"


class GeminiScripted(BackendConformance):
    """Gemini CLI speaking the Gemini API to the scripted server."""

    __test__ = False
    backend_id = "gemini"
    cli = "gemini"
    wire_api = "gemini"
    model_for_tests = MODEL
    api_key = "gm-test-key"

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str] | None:
        """Nothing in the home; the endpoint and the key go by environment."""
        (home / ".cache").mkdir(exist_ok=True)
        return {"GOOGLE_GEMINI_BASE_URL": server_url, "GEMINI_API_KEY": self.api_key}

    def activate_skill_call(self, name: str) -> ToolCall:
        """Gemini CLI's skill tool."""
        return ToolCall("activate_skill", {"name": name})

    def shell_call(self, command: str) -> ToolCall:
        """Gemini CLI's shell tool."""
        return ToolCall("run_shell_command", {"command": command})

    def mcp_call(self, server: str, tool: str, arguments: Mapping[str, Any]) -> ToolCall:
        """MCP tools reach the model as ``mcp_<server>_<tool>``."""
        return ToolCall(f"mcp_{server}_{tool}", dict(arguments))
