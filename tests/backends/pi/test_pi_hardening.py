"""``caliper run --model pi`` through the real pi CLI against the scripted model server: text
the model sends that could break the results file."""

from __future__ import annotations

import pytest

from caliper.testing.harness import FakeRealHome, run_caliper_process
from caliper.testing.model_server import ModelServer

pytestmark = pytest.mark.e2e


def test_a_lone_surrogate_in_the_model_answer_is_saved_as_replacement(pi, fake_user, tmp_path):
    server = ModelServer({"turns": [{"text": "half a pair: \ud800 end"}]}).start()
    try:
        fake_user.configure(server.openai_base_url)
        project = tmp_path / "project"
        project.mkdir()
        spec = project / "s.eval.yaml"
        spec.write_text("tasks:\n  - name: t\n    prompt: hi\n    assert: assert True\n")
        done = run_caliper_process(
            "run",
            spec,
            "--model",
            "pi",
            "--k",
            "1",
            home=FakeRealHome(fake_user.home),
            cwd=project,
            sandbox_parent=tmp_path / "boxes",
            env={"PI_CLI_PATH": str(pi.path)},
            timeout=180,
        )
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    raw = done.results_path.read_bytes().decode("utf-8")  # strict: valid UTF-8
    (attempt,) = done.results["tasks"][0]["attempts"]
    assert attempt["outcome"] == "pass", attempt
    assert "half a pair: \ufffd end" in attempt["final_answer"]
    assert "\\ud800" not in raw
