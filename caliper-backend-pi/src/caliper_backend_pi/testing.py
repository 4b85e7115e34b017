"""pi configured for Caliper's scripted model server, for conformance-style tests.

The user's pi has a ``fake`` provider in ``~/.pi/agent/models.json`` (Chat Completions at the
scripted server) and it as the default in ``settings.json``. Requires ``caliper-core[testing]``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from caliper.testing.conformance import BackendConformance, ToolCall

MODEL = "fake-model"


class PiScripted(BackendConformance):
    """pi speaking Chat Completions to the scripted model server."""

    __test__ = False
    backend_id = "pi"
    cli = "pi"
    wire_api = "chat"
    model_for_tests = MODEL
    api_key = "sk-conformance"

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str] | None:
        """Write the ``fake`` provider and make it pi's default."""
        agent = home / ".pi" / "agent"
        agent.mkdir(parents=True, exist_ok=True)
        models = {
            "providers": {
                "fake": {
                    "baseUrl": f"{server_url}/v1",
                    "api": "openai-completions",
                    "apiKey": self.api_key,
                    "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                    "models": [{"id": MODEL, "contextWindow": 128000, "maxTokens": 4096}],
                }
            }
        }
        (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
        settings = {"defaultProvider": "fake", "defaultModel": MODEL}
        (agent / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
        return None

    def activate_skill_call(self, name: str) -> ToolCall:
        """pi loads a skill by reading its file."""
        return ToolCall(name="read", arguments={"path": f"{{{{skill_path:{name}}}}}"})

    def shell_call(self, command: str) -> ToolCall:
        """pi's shell tool."""
        return ToolCall(name="bash", arguments={"command": command})

    def mcp_call(self, server: str, tool: str, arguments: Mapping[str, Any]) -> ToolCall:
        """pi (1.x, through its MCP adapter) names tools ``mcp__<server>__<tool>``."""
        return ToolCall(name=f"mcp__{server}__{tool}", arguments=dict(arguments))
