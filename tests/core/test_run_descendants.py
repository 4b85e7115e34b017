"""No process of an attempt outlives it, not even one daemonised with ``setsid`` (a new
session escapes the process-group kill) or one that also dropped its environment
(issue 11, item 12). Real ``caliper run`` with the fake agent as a subprocess."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from caliper_fakeagent.harness import Workspace, pid_alive


def sleepers(seconds: str) -> list[int]:
    """Live ``sleep SECONDS`` processes (the durations below are used by nothing else)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv[:2] == [b"sleep", seconds.encode()] and pid_alive(int(proc.name)):
            found.append(int(proc.name))
    return found


@pytest.fixture
def no_leftovers() -> Iterator[list[str]]:
    """The sleep durations a test starts; any still alive afterwards is killed by its pid."""
    durations: list[str] = []
    yield durations
    for seconds in durations:
        for pid in sleepers(seconds):
            os.kill(pid, signal.SIGKILL)


def test_setsid_daemons_of_agent_setup_assert_and_cleanup_are_ended(tmp_path, no_leftovers):
    no_leftovers += ["3101", "3102", "3103", "3104", "3105"]
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: daemonises
            setup: setsid sleep 3101 >/dev/null 2>&1 &
            prompt: |
              fake: bash setsid sleep 3102 >/dev/null 2>&1 &
              fake: bash env -i /usr/bin/setsid sleep 3103 >/dev/null 2>&1 &
              fake: say started them
            assert: |
              import subprocess
              subprocess.Popen(["setsid", "sleep", "3104"], start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            cleanup: setsid sleep 3105 >/dev/null 2>&1 &
        """)
    run = space.run(spec, "--k", "1")
    assert run.returncode == 0, run.stderr
    (attempt,) = run.attempts("daemonises")
    assert attempt["outcome"] == "pass", attempt
    time.sleep(0.3)
    survivors = {s: sleepers(s) for s in no_leftovers if sleepers(s)}
    assert survivors == {}, f"daemonised processes outlived the run: {survivors}"
    assert list(space.sandboxes.iterdir()) == []


def test_daemon_of_one_attempt_is_ended_when_that_attempt_ends(tmp_path, no_leftovers):
    """With two attempts in parallel, the first one's daemon is gone before the second ends."""
    no_leftovers += ["3111"]
    space = Workspace.create(tmp_path)
    flag = tmp_path / "seen"
    spec = space.spec(f"""\
        tasks:
          - name: quick
            prompt: |
              fake: bash setsid sleep 3111 >/dev/null 2>&1 &
              fake: say done
            assert: "assert True"
          - name: slow
            prompt: |
              fake: sleep 1.5
              fake: bash pgrep -x sleep -a | grep -c 'sleep 3111' > {flag}; true
              fake: say done
            assert: "assert True"
        """)
    run = space.run(spec, "--k", "1", "--workers", "2")
    assert run.returncode == 0, run.stderr
    assert flag.read_text().strip() == "0", "the quick attempt's daemon was still running"
    assert sleepers("3111") == []


def test_run_process_leaves_its_callers_other_children_alone(tmp_path):
    """Used as a library (no subreaper), ending a process's descendants never touches the
    caller's own children, nor steals their exit status."""
    import subprocess

    from caliper.system.process import run_process

    own = subprocess.Popen(["sleep", "30"])
    quick = subprocess.Popen(["sh", "-c", "exit 7"])
    try:
        time.sleep(0.2)  # `quick` is a zombie now, waiting for its parent to collect it
        done = run_process(["/bin/true"], env={"PATH": os.defpath}, cwd=tmp_path, timeout=10)
        assert done.returncode == 0
        assert own.poll() is None, "the caller's own child was killed"
        assert quick.wait(timeout=5) == 7, "the caller's child's exit status was taken"
    finally:
        own.kill()
        own.wait()
