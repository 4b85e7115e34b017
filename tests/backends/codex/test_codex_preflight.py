"""``--model codex`` without credentials stops before any attempt (issue 11 item 22), through
the real ``caliper`` script and the real (pinned) codex CLI, with an empty home."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from codex_support import KEY_VARIABLE, user_config

from caliper.testing.agent_clis import bin_path
from caliper.testing.offline import SKIP_REASON, loopback_only

CALIPER = Path(sys.executable).parent / "caliper"
CODEX = bin_path("codex")

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not CODEX.exists(), reason=f"codex is not provisioned at {CODEX}"),
    pytest.mark.skipif(not loopback_only()[0], reason=SKIP_REASON),
]


def _run(tmp_path: Path, *args: str, **env: str) -> tuple[subprocess.CompletedProcess[str], float]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    spec = tmp_path / "s.eval.yaml"
    spec.write_text("tasks:\n  - name: t\n    prompt: hi\n    assert: assert True\n")
    full_env = {
        "HOME": str(home),
        "PATH": os.environ.get("PATH", ""),
        "LANG": "C.UTF-8",
        "CODEX_CLI_PATH": str(CODEX),
        "CALIPER_TMPDIR": str(tmp_path / "boxes"),
        **env,
    }
    start = time.monotonic()
    done = subprocess.run(
        [str(CALIPER), "run", str(spec), "--model", "codex", *(args or ("--k", "2"))],
        cwd=tmp_path,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return done, time.monotonic() - start


def test_no_login_and_no_key_is_one_setup_error_before_any_attempt(tmp_path):
    done, took = _run(tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert done.stderr.count("Codex is not logged in") == 1
    assert "codex login" in done.stderr
    assert "Traceback" not in done.stderr
    assert not list(tmp_path.glob(".caliper/results/*/*.json"))  # no attempt ran
    assert took < 20, f"took {took:.0f} s"


def test_an_api_key_passes_the_preflight(tmp_path):
    # The key is fake and the network is loopback-only: the attempts run and fail, but run.
    done, _ = _run(tmp_path, "--k", "1", "--timeout", "5", OPENAI_API_KEY="sk-not-real")
    assert "Codex is not logged in" not in done.stderr
    assert list(tmp_path.glob(".caliper/results/*/*.json"))


def test_a_custom_provider_without_its_key_variable_is_named(tmp_path):
    codex = tmp_path / "home" / ".codex"
    codex.mkdir(parents=True)
    (codex / "config.toml").write_text(user_config("http://127.0.0.1:9"))
    done, _ = _run(tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert f"${KEY_VARIABLE}, which is not set" in done.stderr
