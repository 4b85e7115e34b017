"""A plugin's conformance module whose CLI is unknown or not provisioned FAILS, never skips.

Each case writes a small plugin test module (a ``BackendConformance`` subclass) and runs it with
a real ``pytest`` subprocess inside the loopback-only namespace, so the kit takes the same path
as in a plugin's own CI: every standard test must error (fail in its fixture) with a message
saying how to provision the CLI, and pytest must exit non-zero.
"""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from caliper.testing.conformance import BackendConformance

MODULE = """
from caliper.testing.conformance import BackendConformance

pytest_plugins = ["caliper.testing.fixtures"]


class TestPluginConformance(BackendConformance):
    backend_id = "claude-code"
    cli = {cli!r}
    cli_pins = {pins!r}
"""

BOGUS_PIN = {
    "bogus": {"kind": "npm", "package": "bogus-agent-cli", "version": "9.9.9", "bin": "bogus"}
}


def standard_test_count() -> int:
    """How many test items the kit's standard tests that drive the CLI (those taking the
    ``kit`` fixture) expand to, parametrised ones included."""
    count = 0
    for name in dir(BackendConformance):
        test = getattr(BackendConformance, name)
        if name.startswith("test_") and "kit" in inspect.signature(test).parameters:
            marks = getattr(test, "pytestmark", [])
            params = [m for m in marks if m.name == "parametrize"]
            count += len(params[0].args[1]) if params else 1
    return count


def declaration_test_count() -> int:
    """The standard tests that read only the backend's declarations (no CLI): they pass."""
    return sum(
        1
        for name in dir(BackendConformance)
        if name.startswith("test_")
        and "kit" not in inspect.signature(getattr(BackendConformance, name)).parameters
    )


def run_plugin_module(
    tmp_path: Path, cli: str, pins: dict, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Write the plugin module and run pytest on it in the loopback-only namespace."""
    (tmp_path / "test_plugin_conformance.py").write_text(MODULE.format(cli=cli, pins=pins))
    full_env = {**os.environ, "CALIPER_AGENT_CLIS": str(tmp_path / "no-clis"), **(env or {})}
    full_env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run(
        [sys.executable, "-m", "caliper.testing.offline", "--", sys.executable, "-m", "pytest",
         "-q", "-rfEs", "-p", "no:cacheprovider", "test_plugin_conformance.py"],
        cwd=tmp_path, env=full_env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def outcome_counts(stdout: str) -> dict[str, int]:
    """``{"failed": n, "passed": n, ...}`` from pytest's summary line."""
    last = stdout.strip().splitlines()[-1]
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", last)}
    return {k: v for k, v in counts.items() if not k.startswith("warning")}


def test_an_unknown_cli_fails_every_standard_test(tmp_path: Path) -> None:
    done = run_plugin_module(tmp_path, "no-such-agent", {})
    assert done.returncode == 1, done.stdout + done.stderr
    assert outcome_counts(done.stdout) == {
        "errors": standard_test_count(),
        "passed": declaration_test_count(),
    }, done.stdout
    assert "unknown agent CLI 'no-such-agent'" in done.stdout
    assert "cli_pins" in done.stdout


def test_a_declared_but_unprovisioned_cli_fails_saying_how_to_provision_it(
    tmp_path: Path,
) -> None:
    done = run_plugin_module(tmp_path, "bogus", BOGUS_PIN)
    assert done.returncode == 1, done.stdout + done.stderr
    assert outcome_counts(done.stdout) == {
        "errors": standard_test_count(),
        "passed": declaration_test_count(),
    }, done.stdout
    said = " ".join(done.stdout.split())
    if "loopback-only" in said and "not provisioned" not in said:
        pytest.fail(f"no loopback-only namespace here: {said[-500:]}")
    assert "bogus-agent-cli 9.9.9) is not provisioned" in said, said[-2000:]
    assert "scripts/provision-agent-clis --pins" in said
    assert "npm install --prefix" in said and "bogus-agent-cli@9.9.9" in said
    assert "BOGUS_CLI_PATH" in said


def test_a_path_override_that_points_nowhere_fails(tmp_path: Path) -> None:
    nowhere = tmp_path / "nowhere" / "bogus"
    done = run_plugin_module(tmp_path, "bogus", BOGUS_PIN, env={"BOGUS_CLI_PATH": str(nowhere)})
    assert done.returncode == 1, done.stdout + done.stderr
    assert outcome_counts(done.stdout) == {
        "errors": standard_test_count(),
        "passed": declaration_test_count(),
    }, done.stdout
    assert f"BOGUS_CLI_PATH={nowhere} does not exist" in " ".join(done.stdout.split())
