"""A malformed hermes:<provider>/<model>, or a Hermes with no provider set up, stops the run
before any attempt (Backend.check_ready)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hermes_support import PINNED_HERMES, PINNED_VERSION

from caliper_backend_hermes.readiness import provider_configured

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


def _pinned_hermes() -> Path:
    if not PINNED_HERMES.exists():
        pytest.skip(f"hermes is not provisioned (hermes-agent=={PINNED_VERSION})")
    return PINNED_HERMES


def _no_provider_env(home: Path, tmp_path: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PATH": f"{PINNED_HERMES.parent}:/usr/bin:/bin",
        "HERMES_CLI_PATH": str(PINNED_HERMES),
        "CALIPER_TMPDIR": str(tmp_path / "boxes"),
    }


@pytest.mark.e2e
def test_hermes_with_no_provider_stops_before_any_attempt_with_one_paragraph(tmp_path):
    """Without a login Hermes prints its setup banner and exits, once per attempt; the run
    must instead stop in the pre-flight: exit 3, one paragraph printed once, nothing saved."""
    _pinned_hermes()
    home = tmp_path / "home"
    home.mkdir()
    spec = tmp_path / "s.eval.yaml"
    spec.write_text("tasks:\n  - name: t\n    prompt: hi\n    assert: assert True\n")
    started = time.monotonic()
    done = subprocess.run(
        [str(CALIPER), "run", str(spec), "--k", "5", "--model", "hermes"],
        cwd=tmp_path,
        env=_no_provider_env(home, tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    took = time.monotonic() - started
    out = done.stdout + done.stderr
    assert done.returncode == 3, out
    assert out.count("Hermes has no model provider set up") == 1, out
    assert "hermes setup" in out and "Traceback" not in out
    assert "Non-interactive mode" not in out  # Hermes' own banner is never quoted
    assert not list(tmp_path.glob(".caliper/results/**/*.json"))
    assert not (home / ".hermes").exists()  # the user's Hermes folder is not created
    assert took < 30, took  # one probe of Hermes' interpreter, no attempt


@pytest.mark.e2e
@pytest.mark.parametrize(
    ("config", "env", "expected"),
    [
        ("", {}, False),
        ("model:\n  provider: custom\n  base_url: http://127.0.0.1:9/v1\n", {}, True),
        ("", {"OPENROUTER_API_KEY": "sk-or-test"}, True),
        ("model: some/model\n", {}, False),
    ],
    ids=["nothing", "custom-endpoint-in-config", "api-key-variable", "model-but-no-provider"],
)
def test_the_probe_gives_hermes_own_answer(tmp_path, monkeypatch, config, env, expected):
    cli = _pinned_hermes()
    home = tmp_path / "home"
    (home / ".hermes").mkdir(parents=True)
    if config:
        (home / ".hermes" / "config.yaml").write_text(config)
    for name in [n for n in os.environ if n.endswith(("_API_KEY", "_TOKEN", "_BASE_URL"))]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert provider_configured(cli, home) is expected
    assert sorted(p.name for p in (home / ".hermes").iterdir()) == (
        ["config.yaml"] if config else []
    )


def test_a_hermes_that_cannot_be_asked_is_not_refused(tmp_path):
    assert provider_configured(Path("/bin/true"), tmp_path) is None
