"""One journal lock per run, through the real ``caliper`` script.

Two ``caliper run --resume`` of one killed run started at the same moment: exactly one goes
on, the other is refused (exit 2, one clear line) before any attempt. ``caliper retry`` of a
killed run whose attempts are missing points at ``--resume`` instead of "nothing to retry".
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from caliper.results import runlock
from caliper_fakeagent.harness import CALIPER, Workspace

K = 3
SPEC = """\
    tasks:
      - name: alpha
        prompt: "fake: sleep 6\\nfake: say done alpha"
        assert: "assert True"
      - name: beta
        prompt: "fake: sleep 6\\nfake: say done beta"
        assert: "assert True"
    """
"""Each attempt takes 6 s: none ends while a resume's twin starts (and is refused)."""
REPETITIONS = 6


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path)


def _journals(space: Workspace) -> list[Path]:
    return sorted((space.root / ".caliper" / "results").glob("*/*.journal.jsonl"))


def _attempt_lines(journal: Path) -> int:
    try:
        lines = journal.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return 0
    return sum(1 for line in lines[1:] if line.startswith('{"attempt"'))


def _has_header(journal: Path) -> bool:
    """The journal's first line (the run's header) is written whole: the run claims its id by
    creating the file before it writes the header, and a kill in between leaves no run."""
    try:
        return b"\n" in journal.read_bytes()
    except FileNotFoundError:
        return False


def _kill_when(process: subprocess.Popen[str], space: Workspace, at_least: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = _journals(space)
        if found and _has_header(found[0]) and _attempt_lines(found[0]) >= at_least:
            break
        if process.poll() is not None:
            raise AssertionError(f"the run ended first: {process.communicate()[1]}")
        time.sleep(0.02)
    else:
        raise AssertionError("the journal never filled")
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=30)


def _resume(space: Workspace, spec: Path, *args: str) -> subprocess.Popen[str]:
    workers = () if "--workers" in args else ("--workers", "1")
    return subprocess.Popen(
        [str(CALIPER), "run", str(spec), "--resume", *workers, *args],
        cwd=space.root,
        env=space.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_resumes_started_together_exactly_one_goes_on(space: Workspace) -> None:
    spec = space.spec(SPEC)
    first = space.start(spec, "--k", str(K), "--workers", "1")
    _kill_when(first, space, at_least=0)
    for _ in range(REPETITIONS):
        pair = [_resume(space, spec), _resume(space, spec)]
        refused = None
        deadline = time.monotonic() + 60
        while refused is None and time.monotonic() < deadline:
            refused = next((p for p in pair if p.poll() is not None), None)
            time.sleep(0.01)
        assert refused is not None, "neither resume ended"
        _, err = refused.communicate(timeout=30)
        assert refused.returncode == 2, err
        assert "is still running" in err and "journal lock" in err, err
        assert "Traceback" not in err
        winner = pair[1] if refused is pair[0] else pair[0]
        assert winner.poll() is None, winner.communicate()[1]
        os.kill(winner.pid, signal.SIGKILL)  # killed while it runs: the next pair resumes it
        winner.communicate(timeout=30)
    done = _resume(space, spec, "--workers", str(2 * K))
    _, err = done.communicate(timeout=120)
    assert done.returncode == 0, err
    assert not _journals(space)
    (saved,) = (space.root / ".caliper" / "results" / "demo").glob("*.json")
    data = json.loads(saved.read_text(encoding="utf-8"))
    for task in data["tasks"]:
        numbers = [a["attempt"] for a in task["attempts"]]
        assert numbers == list(range(1, K + 1)), (task["name"], numbers)
    assert not list(saved.parent.glob("*.lock")), "a saved run leaves no lock file"


def test_retry_of_a_killed_run_with_missing_attempts_points_at_resume(space: Workspace) -> None:
    spec = space.spec(SPEC)
    first = space.start(spec, "--k", str(K), "--workers", "1")
    _kill_when(first, space, at_least=0)
    (journal,) = _journals(space)
    run_id = journal.name[: -len(".journal.jsonl")]
    retried = subprocess.run(
        [str(CALIPER), "retry", "demo"],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert retried.returncode == 2, retried.stderr
    assert "nothing to retry" not in retried.stderr
    assert "--resume" in retried.stderr and run_id in retried.stderr
    assert "Traceback" not in retried.stderr


def test_a_lock_held_by_another_process_refuses_and_a_dead_holders_does_not(
    tmp_path: Path,
) -> None:
    holder = subprocess.Popen(
        [
            "python3",
            "-c",
            "import fcntl,os,sys,time;fd=os.open(sys.argv[1],os.O_RDWR|os.O_CREAT);"
            "fcntl.flock(fd,fcntl.LOCK_EX);print('held',flush=True);time.sleep(60)",
            str(runlock.lock_path(tmp_path, "r1")),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        assert runlock.held_elsewhere(tmp_path, "r1")
        assert not runlock.acquire(tmp_path, "r1")
    finally:
        holder.kill()
        holder.wait()
    assert not runlock.held_elsewhere(tmp_path, "r1")
    assert runlock.acquire(tmp_path, "r1")
    assert runlock.acquire(tmp_path, "r1"), "taking a lock this process holds is true"
    runlock.release(tmp_path, "r1")
    assert not runlock.lock_path(tmp_path, "r1").exists()
