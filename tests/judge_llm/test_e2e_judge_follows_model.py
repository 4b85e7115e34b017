"""With no ``--judge-model`` the judge runs on the ``--model`` backend: a user who only has
Codex grades ``expect:`` through Codex (the real pinned ``codex`` CLI, scripted model server).

The ``claude`` CLI is deliberately not on PATH nor configured, so a judge that fell back to
claude-code could not run at all.
"""

from __future__ import annotations

import os

import pytest
from judge_e2e_support import CODEX_CONFIG_MODEL, ENGINES, verdict

from caliper.plugin.judge import LLM_JUDGE_MARKER
from caliper.testing.harness import FakeRealHome, find_agent_cli, run_caliper_process
from caliper.testing.model_server import ModelServer

SCRIPT = {
    "fallback_text": "No rule matched this request.",
    "rules": [
        {
            "when": {"judge": True},
            "text": verdict(True, "CODEX-GRADED: the agent said hello."),
        },
        {"when": {"user_text_contains": "Say hello"}, "text": "Hello there."},
    ],
}
SPEC = """\
tasks:
  - name: greets
    prompt: Say hello.
    expect: The agent says hello.
"""


@pytest.mark.e2e
def test_expect_is_graded_by_codex_when_model_is_codex(tmp_path):
    cli = find_agent_cli("codex", tmp_path / "bin")
    if isinstance(cli, str):
        pytest.skip(cli)
    server = ModelServer(dict(SCRIPT)).start()
    try:
        home = FakeRealHome(tmp_path / "real-home")
        env = ENGINES["codex"].configure(home.path, server)
        project = tmp_path / "project"
        project.mkdir()
        spec = project / "greet.eval.yaml"
        spec.write_text(SPEC, encoding="utf-8")
        run = run_caliper_process(
            "run",
            spec,
            "--model",
            "codex",
            "--k",
            "1",
            home=home,
            cwd=project,
            sandbox_parent=tmp_path / "sandboxes",
            path=cli.path_env(os.defpath),
            env={"CODEX_CLI_PATH": str(cli.path), **env},
            timeout=180,
        )
        assert run.returncode == 0, run.describe()
        attempt = run.attempt
        assert attempt["outcome"] == "pass", run.describe()
        expect = next(c for c in attempt["checks"] if c["key"] == "expect")
        assert "CODEX-GRADED" in expect["reason"]
        assert expect["details"]["judge_backend"] == "codex"
        meta = run.results["meta"]
        assert meta["backend"] == "codex"
        assert meta["judge_backend"] == "codex"
        assert meta["judge_model"] == CODEX_CONFIG_MODEL  # the concrete model is recorded
        judged = [r for r in server.requests if LLM_JUDGE_MARKER in r.sent_text()]
        assert judged and all(r.api == "responses" for r in judged)
    finally:
        server.stop()
