"""The run stops before any attempt when pi has no model to use (Backend.check_ready)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CALIPER = Path(sys.executable).parent / "caliper"


def _run(tmp_path: Path, *args: str, settings: dict | None = None) -> subprocess.CompletedProcess:
    home = tmp_path / "home"
    (home / ".pi" / "agent").mkdir(parents=True)
    if settings is not None:
        (home / ".pi" / "agent" / "settings.json").write_text(json.dumps(settings))
    spec = tmp_path / "s.eval.yaml"
    spec.write_text("tasks:\n  - name: t\n    prompt: hi\n    assert: assert True\n")
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "PI_CLI_PATH": "/bin/true",
        "CALIPER_TMPDIR": str(tmp_path / "boxes"),
    }
    return subprocess.run(
        [str(CALIPER), "run", str(spec), "--k", "3", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_no_default_model_is_one_message_before_any_attempt(tmp_path):
    done = _run(tmp_path, "--model", "pi")
    assert done.returncode == 3, done.stderr
    assert "no default model" in done.stderr
    assert done.stderr.count("no default model") == 1
    assert "Traceback" not in done.stderr
    assert not list(tmp_path.glob(".caliper/results/*/*.json"))
    assert not list((tmp_path / "boxes").glob("*")) if (tmp_path / "boxes").exists() else True


def test_a_configured_default_passes_the_preflight(tmp_path):
    # /bin/true prints nothing: the attempts then fail as infra errors, but they do run.
    done = _run(
        tmp_path,
        "--model",
        "pi",
        "--k",
        "1",
        settings={"defaultProvider": "fake", "defaultModel": "m"},
    )
    assert "no default model" not in done.stderr
    assert list(tmp_path.glob(".caliper/results/*/*.json"))
