"""``compare``'s cost and agent-time changes: permutation p-values worked by hand, and the
success rates' gatekeeping rule (no task is called changed unless the run is)."""

from __future__ import annotations

import math

import pytest

from caliper.plugin.attempt import Usage
from caliper.results.compare import compare_runs, comparison_data
from caliper.results.compare_spend import compare_spend
from caliper.results.models import AttemptRecord, Outcome, RunMeta, RunResults, TaskResult


def _task(name: str, seconds: list[float], cost: float | None = None) -> TaskResult:
    usage = Usage(1, 1, 0, 0, cost)
    attempts = [
        AttemptRecord(name, n, Outcome.PASS, duration_seconds=s, usage=usage)
        for n, s in enumerate(seconds, 1)
    ]
    return TaskResult(name, 0, len(attempts), attempts)


def _run(run_id: str, *tasks: TaskResult) -> RunResults:
    return RunResults(RunMeta(run_id, "s", "s.eval.yaml", "2026-12-03T00:00:00Z"), list(tasks))


def _by(changes, metric, task):
    return next(c for c in changes if c.metric == metric and c.task == task)


def test_a_clear_slowdown_is_called_with_the_exact_p() -> None:
    # 1..5 s against 11..15 s: of the C(10, 5) = 252 splits only the observed one and its
    # mirror reach |Δ| = 10, so p = 2/252 for the task and (one task) for the run
    a = _run("a", _task("t", [1.0, 2.0, 3.0, 4.0, 5.0]))
    b = _run("b", _task("t", [11.0, 12.0, 13.0, 14.0, 15.0]))
    changes = compare_spend(a, b, alpha=0.05)
    run, task = _by(changes, "duration", None), _by(changes, "duration", "t")
    assert task.p_value == pytest.approx(2 / math.comb(10, 5))
    assert run.p_value == pytest.approx(2 / 252)
    assert task.delta == 10.0 and task.verdict == run.verdict == "increased"
    assert (task.a_median, task.b_median) == (3.0, 13.0)
    cost = _by(changes, "cost", None)
    assert cost.verdict == "unmeasured" and cost.p_value is None


def test_no_task_is_called_changed_when_the_run_is_not() -> None:
    # t slows down clearly (p = 2/252 alone) but u speeds up by as much in spread-out
    # values: the stratified run test does not reject, so the gate stays closed for t
    a = _run("a", _task("t", [1.0, 2.0, 3.0, 4.0, 5.0]), _task("u", [30.0, 5.0, 40.0, 8.0, 27.0]))
    b = _run(
        "b", _task("t", [11.0, 12.0, 13.0, 14.0, 15.0]), _task("u", [1.0, 2.0, 30.0, 2.0, 5.0])
    )
    changes = compare_spend(a, b, alpha=0.05)
    run, t = _by(changes, "duration", None), _by(changes, "duration", "t")
    assert run.p_value is not None and run.p_value > 0.05
    assert t.p_value == pytest.approx(2 / 252)
    assert t.p_adjusted == pytest.approx(run.p_value) and t.verdict == "not significant"


def test_cost_changes_are_in_the_comparison_json() -> None:
    a = _run("a", _task("t", [1.0, 1.0, 1.0], cost=0.1))
    b = _run("b", _task("t", [1.0, 1.0, 1.0], cost=0.1))
    data = comparison_data(compare_runs(a, b))
    cost = next(c for c in data["spend"] if c["metric"] == "cost" and c["task"] == "t")
    assert cost["verdict"] == "no change" and cost["p_value"] == 1.0
    assert "permutation" in data["spend_method"]
