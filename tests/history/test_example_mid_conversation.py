"""examples/mid-conversation runs green as shipped: the real `caliper` script, the real `claude`
CLI, and a scripted model (examples/mid-conversation/scripted-model.yaml), offline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from caliper.testing.harness import run_caliper_process
from caliper.testing.model_server import ModelServer

pytest_plugins = ["caliper.testing.fixtures"]

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "mid-conversation"
SCRIPT = EXAMPLE / "scripted-model.yaml"


@pytest.mark.e2e
def test_the_mid_conversation_example_passes_through_claude(
    tmp_path: Path, agent_cli: Any, fake_real_home: Any
) -> None:
    cli = agent_cli("claude")
    project = tmp_path / "example"
    shutil.copytree(EXAMPLE, project)
    with ModelServer(SCRIPT) as server:
        run = run_caliper_process(
            "run",
            "mid-conversation.eval.yaml",
            "--model",
            "claude-code:claude-sonnet-4-5",
            "--k",
            "1",
            home=fake_real_home,
            cwd=project,
            sandbox_parent=tmp_path / "sandboxes",
            env={
                "CLAUDE_CLI_PATH": str(cli.path),
                "ANTHROPIC_BASE_URL": server.url,
                "ANTHROPIC_API_KEY": "sk-example",
                "CLAUDE_CODE_MAX_RETRIES": "0",
            },
            path=cli.path_env(),
            timeout=240,
        )
        requests = server.model_requests()
    assert run.returncode == 0, run.describe()
    attempt = run.attempt
    assert attempt["outcome"] == "pass", run.describe()
    assert attempt["activated"] == ["changelog-keeper"]
    assert attempt["activation_passed"] is True
    assert attempt["history"] == "history.yaml"
    # the switch to changelog mode reached the model as earlier turns, not in the prompt
    planted = "CHANGELOG.md has only its title so far"
    messages = requests[0].body["messages"]
    assert any(m["role"] == "assistant" and planted in json.dumps(m) for m in messages)
    assert messages[0]["role"] == "user" and "log every change" in json.dumps(messages[0])
    last_user = [m for m in messages if m["role"] == "user"][-1]
    assert "Rename the greeting" in json.dumps(last_user)
    assert planted not in json.dumps(last_user) and "log every change" not in json.dumps(last_user)
    assert planted not in json.dumps(attempt["transcript"])
