"""Claude Code without a login stops the run before any attempt (Backend.check_ready)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from claude_support import claude_cli, needs_claude

from caliper.plugin import run_process
from caliper_backend_claude import home as claude_home
from caliper_backend_claude.login import LOGIN_VARIABLES, logged_in, login_in_env

CALIPER = Path(sys.executable).parent / "caliper"
pytestmark = [pytest.mark.e2e, needs_claude]


def test_no_login_stops_before_any_attempt_with_one_paragraph(tmp_path):
    """It ran k attempts, printed the login error in a panel for each and again at the end,
    and saved a run that measured nothing."""
    home = tmp_path / "home"
    home.mkdir()
    spec = tmp_path / "s.eval.yaml"
    spec.write_text("tasks:\n  - name: t\n    prompt: hi\n    assert: assert True\n")
    env = {
        "HOME": str(home),
        "PATH": f"{claude_cli().parent}:/usr/bin:/bin",
        "CALIPER_TMPDIR": str(tmp_path / "boxes"),
    }
    started = time.monotonic()
    done = subprocess.run(
        [str(CALIPER), "run", str(spec), "--k", "5"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    took = time.monotonic() - started
    out = done.stdout + done.stderr
    assert done.returncode == 3, out
    assert out.count("Claude Code is not logged in") == 1, out
    assert "claude /login" in out and "Traceback" not in out
    assert "attempt 1" not in out  # no attempt ran
    assert not list(tmp_path.glob(".caliper/results/**/*.json"))
    assert sorted(p.name for p in home.iterdir()) == []  # the user's home is not written
    boxes = tmp_path / "boxes"
    assert not boxes.exists() or not any(boxes.iterdir())  # the check's sandbox is removed
    assert took < 30, took


def test_an_api_key_counts_as_a_login(tmp_path, monkeypatch):
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("CALIPER_TMPDIR", str(tmp_path / "boxes"))
    assert logged_in(claude_cli(), home) is False
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-real")
    assert logged_in(claude_cli(), home) is True
    assert list(home.iterdir()) == []


def test_a_cli_that_gives_no_answer_is_not_refused(tmp_path):
    assert logged_in(Path("/bin/true"), tmp_path) is None


@pytest.mark.parametrize("name", LOGIN_VARIABLES)
def test_a_login_variable_is_a_login_to_the_cli_itself(tmp_path, name):
    """What lets the check answer without asking: the pinned CLI's own ``auth status`` says
    logged in for each variable, even beside a stale login file and a failing key helper."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / ".credentials.json").write_text(
        '{"claudeAiOauth": {"accessToken": "stale", "expiresAt": 1}}'
    )
    (home / ".claude" / "settings.json").write_text('{"apiKeyHelper": "false"}')
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), **claude_home.QUIET_SWITCHES, name: "x"}
    done = run_process([str(claude_cli()), "auth", "status"], env=env, cwd=tmp_path, timeout=60)
    assert '"loggedIn": true' in done.stdout, done.stdout
    assert login_in_env(env)


def test_the_check_does_not_ask_when_the_environment_holds_a_login(tmp_path, monkeypatch):
    monkeypatch.setenv("CALIPER_TMPDIR", str(tmp_path / "boxes"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-real")
    assert logged_in(Path("/bin/false"), tmp_path) is True  # /bin/false never answers
    monkeypatch.setenv("CLAUDE_CODE_USE_BEDROCK", "1")  # another provider: the CLI is asked
    assert logged_in(Path("/bin/false"), tmp_path) is None
    monkeypatch.setenv("CLAUDE_CODE_USE_BEDROCK", "0")
    monkeypatch.setenv("ANTHROPIC_API_KEY", " ")
    assert logged_in(Path("/bin/false"), tmp_path) is None
