"""The gate of a ``--k auto`` run is judged by the sequential test that stopped its tasks.

A task of an adaptive run stops when the truncated sequential probability ratio test decides
its bar, so the number of attempts depends on the outcomes; judging the bar afterwards on the
fixed-k Wilson interval of the stopped data (what the gate once did) both disagrees with the
decision the run printed and lets the wrong "met" rate drift. The simulation below runs the
runner's own stopping rule (:func:`caliper.runner.adaptive.stop_reason`) many times with a
true pass rate equal to the bar, judges each stopped task the way ``caliper run``/``report``
evaluate it, and checks the rate against the exact value computed by dynamic programming over
every (attempts, passes) path of that same stopping rule (read from its stop reasons, not
from the boundaries' own calibration).
"""

from __future__ import annotations

import math
import random

import pytest

from caliper.commands.gate_options import evaluate
from caliper.results.gate import (
    SCORE,
    Bar,
    BarVerdict,
    InconclusivePolicy,
    evaluate_gate,
    measure_run,
)
from caliper.results.models import AttemptRecord, Outcome, RunMeta, RunResults, TaskResult
from caliper.results.scoring import score_run
from caliper.runner.adaptive import AdaptiveSettings, stop_reason

Z95 = 1.959963984540054  # the 97.5 % standard normal quantile


def wilson_low(successes: int, n: int, z: float = Z95) -> float:
    """Wilson's (1927) lower bound, written out from the closed form."""
    p = successes / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return 0.0 if successes == 0 else (centre - spread) / (1 + z * z / n)


def stopped_as(reason: str | None) -> str | None:
    """``met``/``failed``/``inconclusive`` from a stop reason, ``None`` when it goes on."""
    if reason is None:
        return None
    if "can no longer be met" in reason:
        return "inconclusive"
    return reason.split(":")[0].split()[-1]  # "bar 5.0% met: …" → "met"


def exact_met_rates(p: float, bar: float, max_k: int) -> tuple[float, float]:
    """(P[Wilson lower bound at the stop clears the bar], P[the run stops with "met"])
    for one task under the runner's rule (stop at the first decision, else at max_k),
    summed exactly over every path by dynamic programming."""
    settings = AdaptiveSettings(max_k=max_k, run_bar=bar)
    alive = {0: 1.0}
    wilson = sequential = 0.0
    for n in range(1, max_k + 1):
        grown: dict[int, float] = {}
        for s, mass in alive.items():
            grown[s + 1] = grown.get(s + 1, 0.0) + mass * p
            grown[s] = grown.get(s, 0.0) + mass * (1 - p)
        alive = {}
        for s, mass in grown.items():
            decision = stopped_as(stop_reason(settings, bar, s, n))
            if decision is None and n < max_k:
                alive[s] = mass
                continue
            wilson += mass * (wilson_low(s, n) >= bar)
            sequential += mass * (decision == "met")
    return wilson, sequential


def adaptive_run(outcomes: list[bool], bar: float, max_k: int) -> RunResults:
    """A saved ``--k auto`` run of one task with these outcomes, as the results file has it."""
    meta = RunMeta(
        run_id="r",
        spec_name="sim",
        spec_path="sim.eval.yaml",
        started_at="2026-12-01T00:00:00Z",
        k=max_k,
        adaptive=AdaptiveSettings(max_k=max_k, run_bar=bar).to_data(),
    )
    attempts = [
        AttemptRecord("t", i, Outcome.PASS if ok else Outcome.TASK_FAIL)
        for i, ok in enumerate(outcomes, start=1)
    ]
    return RunResults(meta, [TaskResult("t", 0, max_k, attempts)])


def simulate(p: float, bar: float, max_k: int, seeds: int) -> dict[str, float]:
    """Run the runner's stopping rule ``seeds`` times; judge each stopped task both ways."""
    rng = random.Random(20261201)
    settings = AdaptiveSettings(max_k=max_k, run_bar=bar)
    bars = [Bar(SCORE, bar, "t")]
    counts = {"wilson_met": 0, "sequential_met": 0, "agrees": 0}
    for _ in range(seeds):
        outcomes: list[bool] = []
        reason = None
        while reason is None and len(outcomes) < max_k:
            outcomes.append(rng.random() < p)
            reason = stop_reason(settings, bar, sum(outcomes), len(outcomes))
        results = adaptive_run(outcomes, bar, max_k)
        old = evaluate_gate(
            bars,
            measure_run(score_run(results)),
            policy=InconclusivePolicy.FAIL,
            confidence=0.95,
        ).bars[0]
        new = evaluate(results, bars, "fail", 0.95).bars[0]
        assert new.measured.interval.method == "confidence-sequence"
        counts["wilson_met"] += old.verdict is BarVerdict.MET
        counts["sequential_met"] += new.verdict is BarVerdict.MET
        expected = stopped_as(reason) or "inconclusive"
        counts["agrees"] += new.verdict.value == expected
    return {name: value / seeds for name, value in counts.items()}


@pytest.mark.parametrize(
    ("rate", "max_k", "seeds"),
    [(0.05, 20, 2000), (0.5, 50, 600)],
)
def test_sequential_gate_keeps_its_error_rate(rate: float, max_k: int, seeds: int) -> None:
    _wilson, exact_sequential = exact_met_rates(rate, rate, max_k)
    assert exact_sequential <= 0.05
    measured = simulate(rate, rate, max_k, seeds)
    # four standard errors of a binomial proportion, plus a floor for tiny rates
    spread = 4 * math.sqrt(exact_sequential * (1 - exact_sequential) / seeds) + 0.002
    assert abs(measured["sequential_met"] - exact_sequential) <= spread, measured
    assert measured["sequential_met"] <= 0.05
    # the gate says what the run said when it stopped each task, every time
    assert measured["agrees"] == 1.0


def test_wilson_after_stopping_meets_more_often_than_the_sequential_gate() -> None:
    exact_wilson, exact_sequential = exact_met_rates(0.5, 0.5, 50)
    assert exact_sequential <= 0.05
    assert exact_wilson > 0.05 > exact_sequential


def adaptive_tasks(outcomes: dict[str, list[bool]], max_k: int) -> RunResults:
    """A saved ``--k auto`` run (current settings, with ``margin``) of these tasks."""
    meta = RunMeta(
        run_id="r",
        spec_name="sim",
        spec_path="sim.eval.yaml",
        started_at="2026-12-01T00:00:00Z",
        k=max_k,
        adaptive=AdaptiveSettings(max_k=max_k, run_bar=0.8).to_data(),
    )
    tasks = [
        TaskResult(
            name,
            index,
            max_k,
            [
                AttemptRecord(name, i, Outcome.PASS if ok else Outcome.TASK_FAIL)
                for i, ok in enumerate(seq, start=1)
            ],
        )
        for index, (name, seq) in enumerate(outcomes.items())
    ]
    return RunResults(meta, tasks)


def test_the_run_bar_is_met_when_every_task_met_it() -> None:
    # 17 straight passes meet 80 % with --max-k 40; 3 in 6 can no longer meet it
    met = judged(adaptive_tasks({"a": [True] * 17, "b": [True] * 17}, 40), [Bar(SCORE, 0.8)])
    (bar,) = met.bars
    assert bar.verdict is BarVerdict.MET and bar.passed
    assert bar.reason.startswith("every task (2) met 80%")
    split = judged(
        adaptive_tasks({"a": [True] * 17, "b": [True, False] * 3}, 40), [Bar(SCORE, 0.8)]
    )
    assert split.bars[0].verdict is BarVerdict.INCONCLUSIVE
    assert "of 2 tasks 1 met it, 0 failed it, 1 undecided" in split.bars[0].reason
    failed = judged(adaptive_tasks({"a": [False] * 6, "b": [False] * 6}, 40), [Bar(SCORE, 0.8)])
    assert failed.bars[0].verdict is BarVerdict.FAILED


def judged(results: RunResults, bars: list[Bar]):
    return evaluate(results, bars, "fail", 0.95)


def test_a_run_bar_at_the_mean_is_met_wrongly_at_most_5_percent() -> None:
    """Tasks at 70 % and 90 % against a run bar of 80 % (the mean is at the bar): the run,
    stopped by the runner's rule and judged by the gate, is met in at most 5 % of runs; exactly
    it is P(70 % task met) · P(90 % task met), each from the DP over every path."""
    rng = random.Random(11)
    settings = AdaptiveSettings(max_k=40, run_bar=0.8)
    exact = 1.0
    for p in (0.7, 0.9):
        alive, met = {0: 1.0}, 0.0
        for n in range(1, 41):
            grown: dict[int, float] = {}
            for s, mass in alive.items():
                grown[s + 1] = grown.get(s + 1, 0.0) + mass * p
                grown[s] = grown.get(s, 0.0) + mass * (1 - p)
            alive = {}
            for s, mass in grown.items():
                decision = stopped_as(stop_reason(settings, 0.8, s, n))
                if decision is None and n < 40:
                    alive[s] = mass
                met += mass * (decision == "met")
        exact *= met
    assert exact <= 0.05
    runs, met_runs = 600, 0
    for _ in range(runs):
        outcomes = {}
        for name, p in (("low", 0.7), ("high", 0.9)):
            seq: list[bool] = []
            while len(seq) < 40 and stop_reason(settings, 0.8, sum(seq), len(seq)) is None:
                seq.append(rng.random() < p)
            outcomes[name] = seq
        met_runs += judged(adaptive_tasks(outcomes, 40), [Bar(SCORE, 0.8)]).passed
    assert met_runs / runs <= 0.05
