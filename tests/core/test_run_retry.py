"""Automatic retry (``--retries``) and ``caliper retry`` through the real ``caliper`` script
with the fake agent (issue 15): every try is kept, scores use the last, and a rate limit is
never a task failure."""

from __future__ import annotations

import json
import random
import subprocess
import threading
import time
from pathlib import Path

import pytest

from caliper.plugin.executor import AttemptJob, FinishedAttempt
from caliper.results.models import AttemptRecord, Outcome
from caliper.runner.attempt.retry import RetryPolicy, run_with_retries
from caliper_fakeagent.harness import CALIPER, Workspace


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path)


def _spec(space: Workspace, limited: int, after: str = "0") -> Path:
    limit = f"fake: rate-limit-first {limited} {space.root / 'counter'} {after}"
    return space.spec(f"""\
        tasks:
          - name: flaky
            prompt: "fake: usage 10 5\\n{limit}\\nfake: say ok"
            assert: "assert True"
          - name: steady
            prompt: "fake: say fine"
            assert: "assert True"
        """)


def test_rate_limited_attempt_is_retried_and_every_try_kept(space: Workspace) -> None:
    run = space.run(_spec(space, limited=2), "--k", "1", "--retries", "2")
    assert run.returncode == 0, run.stderr
    (attempt,) = run.attempts("flaky")
    assert attempt["outcome"] == "pass"
    assert [t["outcome"] for t in attempt["tries"]] == ["infra_error", "infra_error"]
    assert all("429" in t["reason"] for t in attempt["tries"])
    assert all(t["retry_after"] == 0 and t["waited_seconds"] == 0 for t in attempt["tries"])
    assert run.attempts("steady")[0]["tries"] == []
    assert run.results["meta"]["retries"] == 2


def test_retries_used_up_leave_an_unusable_attempt_not_a_failure(space: Workspace) -> None:
    run = space.run(_spec(space, limited=5), "--k", "1", "--retries", "1")
    (attempt,) = run.attempts("flaky")
    assert attempt["outcome"] == "infra_error"  # never task_fail
    assert len(attempt["tries"]) == 1
    assert (space.root / "counter").read_text() == "2"  # exactly 1 + --retries runs


def test_caliper_retry_reruns_only_the_unusable_attempts(space: Workspace) -> None:
    spec = _spec(space, limited=1)
    parent = space.run(spec, "--k", "2", "--retries", "0", "--workers", "1")
    assert parent.returncode == 0, parent.stderr
    flaky = parent.attempts("flaky")
    assert [a["outcome"] for a in flaky] == ["infra_error", "pass"]
    parent_id = parent.results["meta"]["run_id"]

    done = subprocess.run(
        [str(CALIPER), "retry", parent_id, "--retries", "0"],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    folder = space.root / ".caliper" / "results" / "demo"
    runs = sorted(folder.glob("*.json"), key=lambda f: f.stat().st_mtime_ns)
    assert len(runs) == 2
    child = json.loads(runs[-1].read_text())
    meta = child["meta"]
    assert meta["run_id"] != parent_id
    assert meta["parent_run"] == f"demo/{parent_id}" and meta["derived_by"] == "retry"
    assert "flaky #1" in meta["changes"][0]
    tasks = {t["name"]: t["attempts"] for t in child["tasks"]}
    first, second = tasks["flaky"]
    assert first["outcome"] == "pass"
    assert [(t["outcome"], t["run_id"]) for t in first["tries"]] == [("infra_error", parent_id)]
    assert second == flaky[1]  # copied over, not run again
    assert tasks["steady"] == parent.attempts("steady")
    assert (space.root / "counter").read_text() == "3"  # 2 parent runs + 1 retried attempt

    again = subprocess.run(
        [str(CALIPER), "retry", runs[-1].stem],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert again.returncode == 0 and "nothing to retry" in again.stderr


def test_retry_refuses_a_bad_only(space: Workspace) -> None:
    run = space.run(_spec(space, limited=0), "--k", "1")
    done = subprocess.run(
        [str(CALIPER), "retry", run.results["meta"]["run_id"], "--only", "task_fail"],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2 and "task_fail" in done.stderr
    assert "Traceback" not in done.stderr


# -- the policy itself (no agent) ----------------------------------------------------------------


def _report(outcome: Outcome, retry_after: float | None = None) -> FinishedAttempt:
    record = AttemptRecord(task_name="t", attempt=1, outcome=outcome, retry_after=retry_after)
    return FinishedAttempt(job=AttemptJob("t", 1), record=record)


def test_backoff_is_full_jitter_under_a_doubling_cap() -> None:
    policy = RetryPolicy(retries=5, base_seconds=2, max_backoff_seconds=10)
    rng = random.Random(7)
    for number, ceiling in [(1, 2), (2, 4), (3, 8), (4, 10), (5, 10)]:
        delays = [policy.delay(number, None, rng) for _ in range(2000)]
        assert min(delays) >= 0 and max(delays) <= ceiling
        assert max(delays) > 0.9 * ceiling  # the whole range is used, not just its start
    assert policy.delay(1, 42.0, rng) == 42.0  # Retry-After wins
    assert policy.delay(1, 10_000.0, rng) == policy.max_retry_after_seconds


def test_only_infra_errors_are_retried_and_a_stop_cuts_the_wait() -> None:
    calls = []

    def run(outcome: Outcome):
        def once() -> FinishedAttempt:
            calls.append(outcome)
            return _report(outcome, retry_after=0)

        return once

    stop = threading.Event()
    for outcome in (Outcome.TIMEOUT, Outcome.TASK_FAIL, Outcome.JUDGE_ERROR, Outcome.PASS):
        calls.clear()
        run_with_retries(run(outcome), RetryPolicy(retries=3), stop)
        assert calls == [outcome]
    calls.clear()
    report = run_with_retries(run(Outcome.INFRA_ERROR), RetryPolicy(retries=3), stop)
    assert len(calls) == 4 and len(report.record.tries) == 3

    stop.set()
    calls.clear()
    started = time.monotonic()
    waiting = RetryPolicy(retries=3)

    def slow() -> FinishedAttempt:
        calls.append(1)
        return _report(Outcome.INFRA_ERROR, retry_after=60)

    run_with_retries(slow, waiting, stop)
    assert calls == [1] and time.monotonic() - started < 5
