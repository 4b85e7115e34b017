"""`caliper update-cli`: asks each backend through the cli_update_info hook, changes nothing
with --check, and fails clearly for an unknown backend."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from caliper.commands.update_cli import _text_lines
from caliper.plugin.backend import CliUpdate
from caliper.testing import agent_clis
from caliper.testing.offline import loopback_only

CALIPER = Path(sys.executable).parent / "caliper"


def _run(tmp_path, *args, **env):
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    full_env = {"HOME": str(home), "PATH": "/usr/bin:/bin", **env}
    return subprocess.run(
        [str(CALIPER), "update-cli", *args],
        env=full_env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_backend_without_the_hook_is_still_reported(tmp_path):
    done = _run(
        tmp_path, "--check", "--json", CALIPER_LOAD_PLUGINS="fake", CALIPER_TEST_PLUGINS="1"
    )
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)
    assert row["backend"] == "fake" and "no update info" in row["note"]


def test_unknown_backend_is_one_clear_message(tmp_path):
    done = _run(tmp_path, "--check", "codx")
    assert done.returncode == 2
    assert "Did you mean 'codex'?" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.e2e
@pytest.mark.skipif(not loopback_only()[0], reason=loopback_only()[1] or "not loopback-only")
def test_check_reports_installed_version_and_changes_nothing(tmp_path):
    codex = agent_clis.bin_path("codex")
    if not codex.exists():
        pytest.skip(f"codex not provisioned ({agent_clis.INSTALL_COMMAND})")
    done = _run(tmp_path, "--check", "codex", CODEX_CLI_PATH=str(codex))
    assert done.returncode == 0, done.stderr
    version = agent_clis.AGENT_CLIS["codex"]["version"]
    assert f"codex: installed {version}" in done.stdout
    # No registry is reachable in the namespace: the newest version is unknown, not invented.
    assert "newest version unknown" in done.stdout
    assert not list((tmp_path / "home").glob(".codex*"))


def test_check_of_a_cli_that_is_not_installed_says_so_in_words(tmp_path):
    """It printed "hermes: installed -, not installed … update with"."""
    done = _run(tmp_path, "--check", "hermes")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "hermes: not installed", done.stdout
    assert "hermes-agent" in done.stdout  # the note says how to install it
    assert "installed -" not in done.stdout and "update with" not in done.stdout
    assert "hermes update" not in done.stdout  # Hermes' own updater is not there either


@pytest.mark.parametrize(
    ("update", "expected"),
    [
        (
            CliUpdate("pi", None, "0.80.0", "npm install -g pi"),
            ["pi: not installed (newest release: 0.80.0)", "  install with: npm install -g pi"],
        ),
        (
            CliUpdate("codex", "1.0", "1.1", "npm install -g @openai/codex"),
            [
                "codex: installed 1.0, update available: 1.1",
                "  update with: npm install -g @openai/codex",
            ],
        ),
        (CliUpdate("codex", "1.1", "1.1", "npm i"), ["codex: installed 1.1, up to date"]),
        (
            CliUpdate("hermes", "0.19.0", None, "hermes update", self_updating=True),
            ["hermes: installed 0.19.0, newest version unknown (updates itself)"],
        ),
    ],
)
def test_text_lines(update, expected):
    assert _text_lines(update) == expected
