"""Codex configured for Caliper's scripted model server, for conformance-style tests.

The user's Codex is set up the way a company gateway would be: a custom model provider in
``~/.codex/config.toml`` whose ``base_url`` is the scripted server and whose key comes from an
``env_key`` variable (which the backend forwards). Requires ``caliper-core[testing]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from caliper.testing.conformance import BackendConformance, ToolCall

KEY_VARIABLE = "CALIPER_CODEX_TEST_KEY"
"""The variable the scripted provider's ``env_key`` names."""
MODEL = "gpt-5.5"


def user_config(server_url: str, *, extra: str = "") -> str:
    """A user's ``config.toml`` with a custom provider pointing at ``server_url``."""
    return f"""model = "{MODEL}"
model_provider = "scripted"

[model_providers.scripted]
name = "Scripted test server"
base_url = "{server_url}/v1"
wire_api = "responses"
env_key = "{KEY_VARIABLE}"
request_max_retries = 0
stream_max_retries = 0
{extra}"""


class CodexScripted(BackendConformance):
    """Codex speaking the Responses API to the scripted server through a custom provider."""

    __test__ = False
    backend_id = "codex"
    cli = "codex"
    wire_api = "responses"
    model_for_tests = MODEL
    api_key = "sk-test"

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str] | None:
        """Write the provider into ``~/.codex/config.toml``; the key goes by environment."""
        # A real home has ~/.cache already; without it a home snapshot reports the folder that
        # caliper's own entry-point cache creates (.cache/python-entrypoints) as a change.
        (home / ".cache").mkdir(exist_ok=True)
        folder = home / ".codex"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.toml").write_text(user_config(server_url), encoding="utf-8")
        return {KEY_VARIABLE: self.api_key}

    def activate_skill_call(self, name: str) -> ToolCall:
        """Codex has no skill tool: it reads the skill file with its shell."""
        return ToolCall("exec_command", {"cmd": f"cat {{{{skill_path:{name}}}}}"})

    def shell_call(self, command: str) -> ToolCall:
        """Codex's shell tool."""
        return ToolCall("exec_command", {"cmd": command})

    def mcp_call(self, server: str, tool: str, arguments: Mapping[str, Any]) -> ToolCall:
        """Codex sends MCP tools by name in an ``mcp__<server>`` namespace."""
        return ToolCall(tool, dict(arguments), namespace=f"mcp__{server}")
