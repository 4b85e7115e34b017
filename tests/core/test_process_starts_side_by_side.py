"""Processes start side by side: no lock is held while one starts, so one slow start (a large
process forking, the warm ``assert:`` server answering) does not hold up the others, and the
orphan sweep never takes a child that is still being started for an adopted orphan.

Run in a child Python, so that making it a subreaper does not change the test process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHECK = textwrap.dedent(
    """\
    import os, subprocess, sys, threading, time
    from pathlib import Path
    from caliper.system import process

    assert process.adopt_orphans()
    forked = threading.Event()   # the slow start's child exists, its pid not returned yet
    release = threading.Event()

    def slow(argv, stdin, stdout, stderr, cwd, env):
        child = subprocess.Popen(argv, stdin=stdin, stdout=stdout, stderr=stderr,
                                 cwd=str(cwd), env=env, start_new_session=True)
        forked.set()
        assert release.wait(30), "the slow start was never released"
        return child

    results = {}

    def run(name, argv, starter=None):
        results[name] = process.run_process(
            argv, env={"PATH": os.environ["PATH"]}, cwd=Path.cwd(), timeout=30,
            starter=starter)

    # argv[1]: the slow start's child still runs at the sweep, or has exited (a zombie)
    script = "sleep 0.5; echo slow; exit 3" if sys.argv[1] == "running" else "echo slow; exit 3"
    slow_run = threading.Thread(target=run, args=("slow", ["sh", "-c", script], slow))
    slow_run.start()
    assert forked.wait(30)
    if sys.argv[1] == "exited":  # wait until it is a zombie nobody has reaped
        mine = os.getpid()
        while not any(
            p.ppid == mine and p.state == "Z" for p in process._full_table(0).values()
        ):
            time.sleep(0.01)
    # the sweep runs while that child is ours but not yet known as started: it is left alone
    process.sweep_orphans()
    # another process starts and ends meanwhile (with a lock held across starts it would
    # wait for the slow start, which waits for it: the join below would time out)
    quick = threading.Thread(target=run, args=("quick", ["sh", "-c", "echo quick"]))
    quick.start()
    quick.join(20)
    assert not quick.is_alive(), "a start waited for another start to finish"
    release.set()
    slow_run.join(30)
    assert results["quick"].stdout.strip() == "quick", results["quick"]
    assert results["slow"].stdout.strip() == "slow", results["slow"]
    # killed by the sweep it would be -9; reaped by it, its Popen would report 0
    assert results["slow"].returncode == 3, results["slow"]
    print("OK")
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="subreapers are Linux only")
@pytest.mark.parametrize("child", ["running", "exited"])
def test_a_slow_start_holds_up_no_other_start_and_its_child_is_never_swept(child: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHECK, child], capture_output=True, text=True, timeout=90
    )
    assert done.returncode == 0 and "OK" in done.stdout, done.stdout + done.stderr
