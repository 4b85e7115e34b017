"""Scheduling: parallel workers, --fail-fast, and Ctrl-C leaving a partial run and no process."""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Callable
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


WAIT_SECONDS = 90.0
"""How long a test waits for a condition it observes (it returns as soon as it holds)."""


def _wait_until(condition: Callable[[], bool], what: str, timeout: float = WAIT_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def _journaled(space: Workspace) -> list[str]:
    """The task names of the attempts in the running run's journal, in journal order."""
    names = []
    for journal in (space.root / ".caliper" / "results").glob("*/*.journal.jsonl"):
        for line in journal.read_text(encoding="utf-8").splitlines():
            try:
                item = json.loads(line)
            except ValueError:  # a line being written
                continue
            if "attempt" in item:
                names.append(item["attempt"]["task_name"])
    return names


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
        # Wait for what the assertions below rely on, not for a time: both stuck attempts'
        # agents are running (their grandchild wrote its pid), and both quick attempts are
        # *recorded* (in the run's journal) — a quick attempt's cleanup file alone came
        # before its record, and a fixed deadline ran out on a loaded machine.
        _wait_until(lambda: len(list(pids.iterdir())) == 2, "the stuck attempts to start")
        pidfiles = list(pids.iterdir())
        _wait_for(pidfiles, WAIT_SECONDS)
        _wait_until(
            lambda: _journaled(space).count("quick") == 2, "both quick attempts to be recorded"
        )
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
