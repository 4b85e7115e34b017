"""A history of the earlier caliper-eval, converted by ``caliper migrate``, reaches the model
as the earlier tool planted it: the ``/greeter`` turn arrives as the skill's instructions,
through the real ``caliper`` script and the real ``claude`` CLI against a scripted model."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from caliper.testing.harness import caliper_executable, run_caliper_process
from caliper.testing.model_server import ModelServer

pytest_plugins = ["caliper.testing.fixtures"]

FIXTURE = Path(__file__).resolve().parents[1] / "core" / "predecessor" / "slash"


@pytest.mark.e2e
def test_a_migrated_slash_turn_reaches_claude_as_the_skill(
    tmp_path: Path, agent_cli: Any, fake_real_home: Any
) -> None:
    cli = agent_cli("claude")
    project = tmp_path / "project"
    shutil.copytree(FIXTURE, project)
    (project / ".git").mkdir()
    migrated = subprocess.run(
        [str(caliper_executable()), "migrate", "greet.eval.yaml"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert migrated.returncode == 0, migrated.stderr
    script = tmp_path / "model.yaml"
    script.write_text(
        "rules:\n  - when: {user_text_contains: Now greet the team}\n"
        "    text: HELLO PLATFORM TEAM. GREETER-HOUSE-STYLE\nfallback_text: nothing\n"
    )
    with ModelServer(script) as server:
        run = run_caliper_process(
            "run",
            "greet.eval.yaml",
            "--model",
            "claude-code",
            "--k",
            "1",
            home=fake_real_home,
            cwd=project,
            sandbox_parent=tmp_path / "sandboxes",
            env={
                "CLAUDE_CLI_PATH": str(cli.path),
                "ANTHROPIC_BASE_URL": server.url,
                "ANTHROPIC_API_KEY": "sk-migrate",
                "CLAUDE_CODE_MAX_RETRIES": "0",
            },
            path=cli.path_env(),
            timeout=240,
        )
        requests = server.model_requests()
    assert run.returncode == 0, run.describe()
    messages = next(r for r in requests if "Now greet the team" in json.dumps(r.body))
    messages = messages.body["messages"]
    first = json.dumps(messages[0])
    assert messages[0]["role"] == "user"
    assert "Greet in capitals and sign every greeting with GREETER-HOUSE-STYLE." in first
    assert "ARGUMENTS: the platform team" in first
    assert "description:" not in first
    assert any(
        m["role"] == "assistant" and "Ready to greet the platform team" in json.dumps(m)
        for m in messages
    )
    assert "Now greet the team" in json.dumps([m for m in messages if m["role"] == "user"][-1])
