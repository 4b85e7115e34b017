"""The standard conformance tests, run through ``caliper run`` against the real opencode.

Provision the pinned CLI (``scripts/provision-agent-clis --pins tests/cli_pins.py`` from a
caliper checkout, or set ``OPENCODE_CLI_PATH``), then run in a loopback-only namespace::

    python -m caliper.testing.offline -- pytest tests
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from cli_pins import CLI_PINS  # tests/ is on sys.path (pytest's rootdir-relative import)

from caliper.testing.conformance import BackendConformance, ToolCall

pytest_plugins = ["caliper.testing.fixtures"]

pytestmark = pytest.mark.e2e


class TestOpencodeConformance(BackendConformance):
    """opencode with a user-defined OpenAI-compatible provider pointing at the model server."""

    backend_id = "opencode"
    cli = "opencode"
    cli_pins = CLI_PINS
    wire_api = "chat"
    model_for_tests = "fake/caliper-test-model"

    def wire_model(self, model: str) -> str:
        return model.split("/", 1)[1]  # opencode sends the model part of provider/model

    def configure_user_home(self, home: Path, server_url: str) -> Mapping[str, str] | None:
        folder = home / ".config" / "opencode"
        folder.mkdir(parents=True, exist_ok=True)
        provider = {
            "npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": f"{server_url}/v1", "apiKey": "sk-conformance"},
            "models": {"caliper-test-model": {"name": "caliper-test-model"}},
        }
        config = {"provider": {"fake": provider}, "model": "fake/caliper-test-model"}
        (folder / "opencode.jsonc").write_text(
            "// the user's own config\n" + json.dumps(config, indent=2), encoding="utf-8"
        )
        return None

    def activate_skill_call(self, name: str) -> ToolCall:
        return ToolCall("skill", {"name": name})

    def shell_call(self, command: str) -> ToolCall:
        return ToolCall("bash", {"command": command, "description": "run the command"})
