"""A malformed hermes:<provider>/<model> stops the run before any attempt (Backend.check_ready)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CALIPER = Path(sys.executable).parent / "caliper"


def test_malformed_model_fails_with_exit_2_before_any_attempt(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    spec = tmp_path / "s.eval.yaml"
    spec.write_text("tasks:\n  - name: t\n    prompt: hi\n    assert: assert True\n")
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "HERMES_CLI_PATH": "/bin/true",
        "CALIPER_TMPDIR": str(tmp_path / "boxes"),
    }
    done = subprocess.run(
        [str(CALIPER), "run", str(spec), "--k", "3", "--model", "hermes:openrouter/"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "<provider>/<model>" in done.stderr and "Traceback" not in done.stderr
    assert not list(tmp_path.glob(".caliper/results/*/*.json"))
