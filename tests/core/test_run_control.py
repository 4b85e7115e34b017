"""Scheduling: parallel workers, --fail-fast, and Ctrl-C leaving a partial run and no process."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from caliper_fakeagent.harness import Workspace, pid_alive


def test_workers_run_attempts_in_parallel(tmp_path):
    """Four attempts meet at a barrier: each waits (up to 10 s) until all four have started."""
    space = Workspace.create(tmp_path)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    wait = (
        f"touch {barrier}/$$; i=0; "
        f"while [ $(ls {barrier} | wc -l) -lt 4 ] && [ $i -lt 100 ]; "
        "do sleep 0.1; i=$((i+1)); done; "
        f"ls {barrier} | wc -l"
    )
    spec = space.spec(f"""\
        tasks:
          - name: meet
            prompt: |
              fake: bash {wait}
            assert: "assert True"
        """)
    started = time.monotonic()
    run = space.run(spec, "--k", "4", "--workers", "4", "--timeout", "30")
    elapsed = time.monotonic() - started
    assert run.returncode == 0, run.stderr
    attempts = run.attempts("meet")
    assert [a["outcome"] for a in attempts] == ["pass"] * 4
    seen = [a["transcript"][0]["tool_output"].strip() for a in attempts]
    assert seen == ["4"] * 4, "attempts did not overlap in time"
    # one after the other, three of them would have waited the full 10 s at the barrier
    assert elapsed < 10, f"took {elapsed:.1f}s: attempts did not run in parallel"


def test_fail_fast_aborts_a_task_after_consecutive_infra_errors(tmp_path):
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: broken
            prompt: "fake: rate-limit"
            assert: "assert True"
          - name: fine
            prompt: "fake: say ok"
            assert: "assert True"
        """)
    run = space.run(spec, "--k", "5", "--workers", "1", "--fail-fast", "2")
    assert run.returncode == 0, run.stderr
    broken = run.task("broken")
    assert broken["aborted"] is True
    assert [a["outcome"] for a in broken["attempts"]] == ["infra_error", "infra_error"]
    fine = run.task("fine")
    assert fine["aborted"] is False
    assert len(fine["attempts"]) == 5


def test_fail_fast_zero_runs_every_attempt(tmp_path):
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: broken
            prompt: "fake: exit 1"
            assert: "assert True"
        """)
    run = space.run(spec, "--k", "3", "--fail-fast", "0")
    assert len(run.attempts("broken")) == 3
    assert run.task("broken")["aborted"] is False


def _wait_for(paths: list[Path], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(p.exists() and p.read_text().strip() for p in paths):
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {paths}")


def test_ctrl_c_saves_a_partial_run_and_leaves_nothing_running(tmp_path):
    space = Workspace.create(tmp_path)
    pids = tmp_path / "pids"
    pids.mkdir()
    marks = tmp_path / "marks"
    marks.mkdir()
    quick = tmp_path / "quick"
    quick.mkdir()
    spec = space.spec(f"""\
        tasks:
          - name: quick
            prompt: "fake: say quick"
            cleanup: touch {quick}/done-$$
            assert: "assert True"
          - name: stuck
            setup: |
              printf 'fake: grandchild %s\\nfake: sleep 60\\n' {pids}/$$ > fake-scenario.txt
            cleanup: touch {marks}/cleanup-$$
            prompt: work on it
            assert: "assert True"
        """)
    process = space.start(spec, "--k", "2", "--workers", "3", "--timeout", "90")
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(list(pids.iterdir())) < 2:
            time.sleep(0.05)
        pidfiles = list(pids.iterdir())
        assert len(pidfiles) == 2, "the stuck attempts never started"
        _wait_for(pidfiles, 10)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and len(list(quick.iterdir())) < 2:
            time.sleep(0.05)  # both quick attempts are finishing (cleanup is their last step)
    finally:
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        run = space.finish(process, timeout=30)
    assert time.monotonic() - sent < 15
    assert run.returncode == 130, run.stderr
    assert "Interrupted" in run.stderr
    assert "Traceback" not in run.stderr
    meta = run.results["meta"]
    assert meta["partial"] is True
    assert "interrupted" in meta["stop_reason"]
    assert [a["outcome"] for a in run.attempts("quick")] == ["pass", "pass"]
    assert run.attempts("stuck") == []
    for pidfile in pidfiles:
        pid = int(pidfile.read_text())
        assert not pid_alive(pid), f"grandchild {pid} survived Ctrl-C"
    assert len(list(marks.iterdir())) == 2, "cleanup did not run for interrupted attempts"
    assert list(space.sandboxes.iterdir()) == []
