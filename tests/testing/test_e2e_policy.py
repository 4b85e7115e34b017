"""caliper.testing.e2e_policy and the agent_cli marker rule, on tiny suites run by pytester.

Each inner suite runs in its own pytest process, with a stand-in "provisioned CLIs" folder
(``CALIPER_AGENT_CLIS``) holding one executable, so no real agent CLI is needed.
"""

from __future__ import annotations

import os

import pytest

pytest_plugins = ["pytester"]

PLUGINS = ("-p", "caliper.testing.e2e_policy", "-p", "caliper.testing.fixtures")

SKIPPING = """
import pytest

@pytest.mark.e2e
def test_marked_skips_in_body():
    pytest.skip("agent CLI claude is not provisioned")

@pytest.mark.e2e
@pytest.mark.skipif(True, reason="not in a loopback-only network namespace")
def test_marked_skips_by_marker():
    pass

def test_unmarked_skip_is_just_a_skip():
    pytest.skip("tomllib is 3.11+")

@pytest.mark.e2e
@pytest.mark.xfail(reason="a known gap", run=False)
def test_marked_xfail_stays_an_xfail():
    pass
"""


@pytest.fixture
def clis(tmp_path, monkeypatch):
    """A stand-in provisioned-CLIs folder with one executable, ``bin/fake-cli``."""
    folder = tmp_path / "agent-clis"
    (folder / "bin").mkdir(parents=True)
    cli = folder / "bin" / "fake-cli"
    cli.write_text("#!/bin/sh\necho hello from a pinned cli\n")
    cli.chmod(0o755)
    monkeypatch.setenv("CALIPER_AGENT_CLIS", str(folder))
    return folder


def test_with_the_switch_a_skipped_e2e_test_fails_quoting_its_reason(pytester, monkeypatch):
    monkeypatch.setenv("CALIPER_REQUIRE_E2E", "1")
    pytester.makepyfile(test_inner=SKIPPING)
    result = pytester.runpytest_subprocess(*PLUGINS, "-rA")
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed", 0) + outcomes.get("errors", outcomes.get("error", 0)) == 2, (
        result.stdout.str()
    )
    assert outcomes.get("skipped") == 1 and outcomes.get("xfailed") == 1, outcomes
    assert result.ret != 0
    out = result.stdout.str()
    assert "CALIPER_REQUIRE_E2E=1: the end-to-end test" in out
    assert "agent CLI claude is not provisioned" in out
    assert "not in a loopback-only network namespace" in out


def test_without_the_switch_the_same_skips_are_skips(pytester, monkeypatch):
    monkeypatch.delenv("CALIPER_REQUIRE_E2E", raising=False)
    pytester.makepyfile(test_inner=SKIPPING)
    result = pytester.runpytest_subprocess(*PLUGINS)
    result.assert_outcomes(skipped=3, xfailed=1)
    assert result.ret == 0


STARTS_CLIS = """
import os, subprocess
from pathlib import Path
import pytest

CLI = Path(os.environ["CALIPER_AGENT_CLIS"]) / "bin" / "fake-cli"

def test_unmarked_runs_a_pinned_cli():
    subprocess.run([str(CLI)], check=True, capture_output=True)

def test_unmarked_hands_a_pinned_cli_over_by_env(tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "fake-cli").symlink_to(CLI)
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"}
    subprocess.run(["sh", "-c", "true"], env=env, check=True)

def test_unmarked_names_it_by_variable():
    subprocess.run(["true"], env={"FAKE_CLI_PATH": str(CLI), "PATH": "/usr/bin:/bin"}, check=True)

@pytest.mark.e2e
def test_marked_runs_a_pinned_cli():
    subprocess.run([str(CLI)], check=True, capture_output=True)

def test_unmarked_runs_something_else():
    subprocess.run(["true"], check=True)

def test_unmarked_passes_the_inherited_path_on():
    subprocess.run(["true"], env={"PATH": os.environ["PATH"]}, check=True)

def test_unmarked_uses_the_agent_cli_fixture(agent_cli):
    pass
"""


def test_an_unmarked_test_that_starts_a_pinned_cli_fails_naming_it(pytester, clis, monkeypatch):
    # the pinned CLIs on the inherited PATH, as `. .agent-clis/env.sh` puts them
    monkeypatch.setenv("PATH", f"{clis / 'bin'}{os.pathsep}{os.environ['PATH']}")
    pytester.makepyfile(test_inner=STARTS_CLIS)
    result = pytester.runpytest_subprocess(*PLUGINS, "-rA")
    out = result.stdout.str()
    assert result.ret != 0
    for name in (
        "test_unmarked_runs_a_pinned_cli",
        "test_unmarked_hands_a_pinned_cli_over_by_env",
        "test_unmarked_names_it_by_variable",
    ):
        assert f"test_inner.py::{name} started a real agent CLI" in out, out
    assert str(clis / "bin" / "fake-cli") in out
    assert "PASSED test_inner.py::test_marked_runs_a_pinned_cli" in out
    assert "PASSED test_inner.py::test_unmarked_runs_something_else" in out
    assert "uses the agent_cli fixture (a real agent CLI) but is not marked" in out
    assert "test_unmarked_runs_something_else started" not in out
    assert "PASSED test_inner.py::test_unmarked_passes_the_inherited_path_on" in out
