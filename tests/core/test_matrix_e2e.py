"""A matrix on two real agent CLIs (issue 18): ``caliper run SPEC --model claude-code:M
--model pi`` runs the real, pinned ``claude`` and ``pi`` against one scripted model server
(Anthropic Messages for claude, Chat Completions for pi) from one invocation, and saves one
run per engine tied by a matrix id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from caliper.testing.harness import FakeRealHome, find_agent_cli, run_caliper_process
from caliper.testing.model_server import ModelServer

pytestmark = pytest.mark.e2e

CLAUDE_MODEL = "claude-code:claude-sonnet-4-5"
PI_MODEL_ID = "fake-model"


def _configure_pi(home: Path, base_url: str) -> None:
    """The fake user's pi setup: a custom provider pointing at the scripted server."""
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    models = {
        "providers": {
            "fake": {
                "baseUrl": base_url,
                "api": "openai-completions",
                "apiKey": "sk-test",
                "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
                "models": [{"id": PI_MODEL_ID, "contextWindow": 128000, "maxTokens": 4096}],
            }
        }
    }
    (agent / "models.json").write_text(json.dumps(models), encoding="utf-8")
    settings = {"defaultProvider": "fake", "defaultModel": PI_MODEL_ID}
    (agent / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    (agent / "auth.json").write_text("{}", encoding="utf-8")


def test_claude_and_pi_in_one_matrix_run(tmp_path: Path) -> None:
    claude = find_agent_cli("claude", tmp_path / "bin-claude")
    pi = find_agent_cli("pi", tmp_path / "bin-pi")
    for cli in (claude, pi):
        if isinstance(cli, str):
            pytest.skip(cli)
    server = ModelServer({"turns": [{"text": "MATRIX-DONE"}]}).start()
    try:
        home = tmp_path / "real-home"
        home.mkdir()
        _configure_pi(home, server.openai_base_url)
        project = tmp_path / "project"
        project.mkdir()
        spec = project / "m.eval.yaml"
        spec.write_text(
            "tasks:\n  - name: answers\n    prompt: Say the word.\n    assert: assert True\n",
            encoding="utf-8",
        )
        done = run_caliper_process(
            "run",
            spec,
            "--model",
            CLAUDE_MODEL,
            "--model",
            "pi",
            "--k",
            "2",
            "--workers",
            "2",
            home=FakeRealHome(home),
            cwd=project,
            sandbox_parent=tmp_path / "boxes",
            env={
                "CLAUDE_CLI_PATH": str(claude.path),
                "PI_CLI_PATH": str(pi.path),
                "ANTHROPIC_BASE_URL": server.url,
                "ANTHROPIC_API_KEY": "sk-matrix",
                "CLAUDE_CODE_MAX_RETRIES": "0",
            },
            timeout=300,
        )
    finally:
        server.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    runs = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((project / ".caliper" / "results" / "m").glob("*.json"))
    ]
    assert len(runs) == 2
    by_engine = {run["meta"]["matrix"]["engine"]: run for run in runs}
    assert set(by_engine) == {CLAUDE_MODEL, "pi"}
    assert len({run["meta"]["matrix"]["id"] for run in runs}) == 1
    assert by_engine[CLAUDE_MODEL]["meta"]["backend"] == "claude-code"
    assert by_engine["pi"]["meta"]["backend"] == "pi"
    for engine, run in by_engine.items():
        (task,) = run["tasks"]
        outcomes = [a["outcome"] for a in task["attempts"]]
        assert outcomes == ["pass", "pass"], (engine, task["attempts"])
        assert all("MATRIX-DONE" in (a["final_answer"] or "") for a in task["attempts"])
    assert "sk-matrix" not in done.stdout + done.stderr
    for run in runs:
        assert "sk-matrix" not in json.dumps(run)
    assert "Matrix" in done.stdout and "pi" in done.stdout
