"""The truncated sequential probability ratio test ``--k auto`` stops with, checked against
error rates computed independently of the boundaries' own calibration: every (attempts,
passes) path is followed by dynamic programming (and, for a short horizon, every outcome
sequence is enumerated) through the design's decisions, and the runner's rule is simulated
with a seeded generator.

What it shows (exact, at 95 %): wrong "met" (true rate ≤ bar) and wrong "failed" (true rate
≥ bar + margin) each stay at or below 5 % for every bar, horizon and true rate on the grid;
at a true rate of 95 % against a bar of 80 % with ``--max-k 40`` the bar is met 80.5 % of
the time with 22.2 attempts on average (55 % of a fixed k = 40), where the one-sided mixture
rule it replaces needed 20 straight passes before it could meet the bar at all.
"""

from __future__ import annotations

import itertools
import random

import pytest

from caliper.results.models import AttemptRecord, Outcome
from caliper.results.sequential import design
from caliper.runner.adaptive import AdaptiveK, AdaptiveSettings, stop_reason


def chances(found, p: float) -> tuple[float, float, float]:
    """(P[met], P[failed], E[usable attempts]) at true rate ``p`` by DP over (n, passes),
    stopping where the runner's rule would (a decision, a bar that cannot be met, max-k)."""
    settings = AdaptiveSettings(max_k=found.max_n, min_k=found.min_n, run_bar=found.bar)
    alive = {0: 1.0}
    met = failed = spent = 0.0
    for n in range(1, found.max_n + 1):
        grown: dict[int, float] = {}
        for s, mass in alive.items():
            grown[s + 1] = grown.get(s + 1, 0.0) + mass * p
            grown[s] = grown.get(s, 0.0) + mass * (1 - p)
        alive = {}
        for s, mass in grown.items():
            decision = found.decide(s, n)
            met += mass * (decision == "met")
            failed += mass * (decision == "failed")
            if (
                decision is None
                and n < found.max_n
                and stop_reason(settings, found.bar, s, n) is None
            ):
                alive[s] = mass
            else:
                spent += mass * n
    return met, failed, spent


GRID = [
    (bar, max_k, min_k) for bar in (0.5, 0.8, 0.9) for max_k in (10, 20, 40, 60) for min_k in (1, 5)
]


@pytest.mark.parametrize(("bar", "max_k", "min_k"), GRID)
def test_wrong_decisions_stay_within_five_percent(bar: float, max_k: int, min_k: int) -> None:
    found = design(bar, 0.1, max_k, min_k, 0.05, 0.05)
    edge = bar + found.margin
    for p in [bar * i / 10 for i in range(11)]:
        assert chances(found, p)[0] <= 0.05, (p, "wrong met")
    for p in [edge + (1 - edge) * i / 10 for i in range(11)]:
        assert chances(found, p)[1] <= 0.05, (p, "wrong failed")


def test_the_dp_matches_enumerating_every_sequence() -> None:
    found = design(0.7, 0.1, 12, 1, 0.05, 0.05)
    p = 0.7
    met = 0.0
    for path in itertools.product((True, False), repeat=12):
        s = 0
        for n, passed in enumerate(path, start=1):
            s += passed
            decision = found.decide(s, n)
            if decision is not None:
                break
        if decision == "met":
            k = sum(path)
            met += p**k * (1 - p) ** (12 - k)
    # enumeration counts every full sequence once; a stopped path's tail sums to its weight
    assert met == pytest.approx(chances(found, p)[0], abs=1e-12)


def run_task(p: float, bar: float, max_k: int, rng: random.Random) -> tuple[int, str]:
    """One task through :class:`AdaptiveK`, one attempt at a time: (attempts, decision)."""
    state = AdaptiveK(AdaptiveSettings(max_k=max_k, run_bar=bar), ["t"])
    spent = 0
    while state.next_jobs(1, lambda _name: False):
        spent += 1
        outcome = Outcome.PASS if rng.random() < p else Outcome.TASK_FAIL
        state.observe(AttemptRecord(task_name="t", attempt=spent, outcome=outcome))
    reason = state.reasons()["t"]
    return spent, "met" if " met:" in reason else "failed" if " failed:" in reason else "-"


def test_a_high_rate_meets_a_high_bar_with_few_attempts() -> None:
    found = design(0.8, 0.1, 40, 1, 0.05, 0.05)
    met, _failed, spent = chances(found, 0.95)
    assert met >= 0.80 and spent <= 0.6 * 40, (met, spent)
    rng = random.Random(20261202)
    runs = [run_task(0.95, 0.8, 40, rng) for _ in range(1500)]
    simulated_met = sum(d == "met" for _, d in runs) / len(runs)
    simulated_spent = sum(a for a, _ in runs) / len(runs)
    assert abs(simulated_met - met) < 0.04, (simulated_met, met)
    assert abs(simulated_spent - spent) < 1.0, (simulated_spent, spent)
    assert simulated_met >= 0.78 and simulated_spent <= 24


@pytest.mark.parametrize(("p", "bar"), [(0.8, 0.8), (0.7, 0.8), (0.9, 0.9), (0.5, 0.5)])
def test_simulated_wrong_met_stays_within_five_percent(p: float, bar: float) -> None:
    rng = random.Random(7)
    runs = [run_task(p, bar, 40, rng) for _ in range(1500)]
    assert sum(d == "met" for _, d in runs) / len(runs) <= 0.05 + 0.011  # 2 s.e. at 5 %
