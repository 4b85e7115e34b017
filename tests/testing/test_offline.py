"""The loopback-only wrapper: real namespaces, real processes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from caliper.testing import offline

WRAP = [sys.executable, "-m", "caliper.testing.offline"]
PROBE = (
    "import os, socket\n"
    "from caliper.testing.offline import interfaces, loopback_only\n"
    "s = socket.socket(); s.settimeout(3)\n"
    "try:\n"
    "    s.connect(('10.255.255.1', 9)); out = 'connected'\n"
    "except OSError as e:\n"
    "    out = type(e).__name__\n"
    "print(interfaces(), loopback_only()[0], os.environ.get('CALIPER_OFFLINE'), out)\n"
)
CAN_UNSHARE = offline.namespace_problem() is None or offline.loopback_only()[0]


@pytest.mark.skipif(not CAN_UNSHARE, reason="network namespaces are not available here")
def test_command_runs_with_only_loopback_and_cannot_reach_out() -> None:
    done = subprocess.run(
        [*WRAP, "--", sys.executable, "-c", PROBE],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:3] == ["['lo']", "True", "loopback"]
    assert done.stdout.split()[3] != "connected"


@pytest.mark.skipif(not CAN_UNSHARE, reason="network namespaces are not available here")
def test_exit_code_is_propagated() -> None:
    done = subprocess.run([*WRAP, "--", "sh", "-c", "exit 7"], timeout=60, check=False)
    assert done.returncode == 7


def test_missing_command_and_usage_errors() -> None:
    missing = subprocess.run(
        [*WRAP, "--", "no-such-command-xyz"], capture_output=True, text=True, timeout=60
    )
    assert missing.returncode == 127
    assert "cannot run 'no-such-command-xyz'" in missing.stderr
    usage = subprocess.run([*WRAP], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and usage.stderr.startswith("usage:")


@pytest.mark.skipif(offline.loopback_only()[0], reason="already inside a loopback-only namespace")
def test_without_unshare_the_command_runs_anyway_and_says_why(tmp_path) -> None:
    env = {**os.environ, "PATH": str(tmp_path)}  # no unshare on PATH
    done = subprocess.run(
        [*WRAP, "--", sys.executable, "-c", "import os; print(os.environ['CALIPER_OFFLINE'])"],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "unavailable:the unshare command (util-linux) is not installed"
    assert "running WITH network" in done.stderr


def test_namespace_problem_names_the_missing_tool(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    assert offline.namespace_problem() == "the unshare command (util-linux) is not installed"


def test_loopback_only_reports_other_interfaces_or_confirms_lo() -> None:
    ok, why = offline.loopback_only()
    names = offline.interfaces()
    assert "lo" in names
    if names == ["lo"]:
        assert ok, why
    else:
        assert not ok and "besides lo" in why
