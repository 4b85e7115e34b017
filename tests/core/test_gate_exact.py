"""The fixed-k gate's own error rates, computed exactly by enumerating every number of passes
a task can have and judging each through the gate as ``caliper run``/``report`` do.

With ``--inconclusive pass`` a job fails only on a "failed" bar, so a bar whose true rate is
exactly at its threshold should fail at most ``α/2 = 2.5 %`` of the time, and a job of ten
such bars at most 2.5 % in all. The Wilson interval the gate used gave 3.3 % (bar 80 %,
k = 10) and 7.0 % (bar 90 %) for one bar, and 20–29 % for a job of ten; the exact
Clopper–Pearson tails with a Bonferroni share per bar keep both bounds.
"""

from __future__ import annotations

from math import comb

import pytest

from caliper.commands.gate_options import evaluate
from caliper.results.gate import SCORE, Bar, BarVerdict
from caliper.results.models import AttemptRecord, Outcome, RunMeta, RunResults, TaskResult


def fixed_run(passes: list[int], k: int) -> RunResults:
    meta = RunMeta(
        run_id="r", spec_name="sim", spec_path="s.eval.yaml", started_at="2026-12-01T00:00:00Z", k=k
    )
    tasks = []
    for index, s in enumerate(passes):
        attempts = [
            AttemptRecord(f"t{index}", i, Outcome.PASS if i <= s else Outcome.TASK_FAIL)
            for i in range(1, k + 1)
        ]
        tasks.append(TaskResult(f"t{index}", index, k, attempts))
    return RunResults(meta, tasks)


def fail_chance(bar: float, k: int, bars: int) -> float:
    """P[one of ``bars`` task bars at truth = bar is judged failed], exactly."""
    chance = 0.0
    for s in range(k + 1):
        results = fixed_run([s] * bars, k)
        gate = evaluate(results, [Bar(SCORE, bar, f"t{i}") for i in range(bars)], "pass", 0.95)
        if gate.bars[0].verdict is BarVerdict.FAILED:
            chance += comb(k, s) * bar**s * (1 - bar) ** (k - s)
    return chance


@pytest.mark.parametrize("bar", [0.5, 0.7, 0.8, 0.9, 0.95])
@pytest.mark.parametrize("k", [5, 10, 20, 30])
def test_one_bar_at_its_truth_fails_at_most_2_5_percent(bar: float, k: int) -> None:
    assert fail_chance(bar, k, 1) <= 0.025


@pytest.mark.parametrize("bar", [0.8, 0.9])
def test_a_job_of_ten_bars_at_their_truth_fails_at_most_2_5_percent(bar: float) -> None:
    one = fail_chance(bar, 10, 10)
    assert 1 - (1 - one) ** 10 <= 0.025


def test_a_bar_at_its_truth_is_met_at_most_2_5_percent() -> None:
    chance = 0.0
    for s in range(11):
        gate = evaluate(fixed_run([s], 10), [Bar(SCORE, 0.5, "t0")], "fail", 0.95)
        if gate.bars[0].verdict is BarVerdict.MET:
            chance += comb(10, s) * 0.5**10
    assert chance <= 0.025


def test_the_bar_shows_the_exact_interval_that_judged_it() -> None:
    gate = evaluate(fixed_run([8], 10), [Bar(SCORE, 0.8, "t0")], "fail", 0.95)
    interval = gate.bars[0].measured.interval
    assert interval.method == "clopper-pearson"
    # Clopper–Pearson 8/10 at 95 %: [0.4439, 0.9748] (published tables)
    assert (round(interval.low, 4), round(interval.high, 4)) == (0.4439, 0.9748)


def test_an_aggregate_bar_fails_only_at_the_shared_level() -> None:
    """Three tasks at 5/10: the run's task-mean interval is [33.1 %, 66.9 %] at 95 % and
    reaches 68.4 % at 97.5 %, the level each of two bars gets. A run bar of 68 % is below the
    95 % interval but not below the shared one: inconclusive, and the reason says why."""
    results = fixed_run([5, 5, 5], 10)
    alone = evaluate(results, [Bar(SCORE, 0.68)], "pass", 0.95).bars[0]
    assert alone.verdict is BarVerdict.FAILED
    bars = [Bar(SCORE, 0.68), Bar(SCORE, 0.1, "t0")]
    shared = evaluate(results, bars, "pass", 0.95).bars[0]
    assert shared.verdict is BarVerdict.INCONCLUSIVE
    assert "not at the 97.5% level that shares the error among the 2 bars" in shared.reason
    bars = [Bar(SCORE, 0.69), Bar(SCORE, 0.1, "t0")]
    assert evaluate(results, bars, "pass", 0.95).bars[0].verdict is BarVerdict.FAILED
