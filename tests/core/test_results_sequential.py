"""The anytime-valid confidence sequence behind ``--k auto`` (issue 15), checked against a
closed form and, by seeded simulation, against its error bound under continuous monitoring."""

from __future__ import annotations

import math
import random

import pytest

from caliper.results.sequential import (
    bar_decision,
    confidence_sequence,
    log_mixture,
    log_one_sided,
)
from caliper.results.stats import wilson_interval


@pytest.mark.parametrize("n", [1, 3, 8, 20, 50])
@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_all_passes_match_the_closed_form(n: int, confidence: float) -> None:
    # with a uniform mixture, M_n(p) = 1 / ((n + 1) p^n) after n passes in n attempts, so the
    # interval is [(alpha / (n + 1)) ** (1 / n), 1]
    alpha = 1 - confidence
    interval = confidence_sequence(n, n, confidence)
    assert interval.high == 1.0
    assert interval.low == pytest.approx((alpha / (n + 1)) ** (1 / n), abs=1e-9)
    mirrored = confidence_sequence(0, n, confidence)
    assert mirrored.low == 0.0
    assert mirrored.high == pytest.approx(1 - (alpha / (n + 1)) ** (1 / n), abs=1e-9)


def test_the_mixture_is_the_beta_binomial_ratio() -> None:
    # 3 passes in 5 at p = 0.5: B(4, 3) / B(1, 1) = 3! 2! / 6! = 1/60, over 0.5^5
    assert log_mixture(3, 5, 0.5) == pytest.approx(math.log((1 / 60) / 0.5**5))


def test_edges_sit_where_the_martingale_crosses_one_over_alpha() -> None:
    interval = confidence_sequence(7, 12, 0.95)
    level = math.log(20)
    for edge in (interval.low, interval.high):
        assert log_mixture(7, 12, edge) == pytest.approx(level, abs=1e-6)
    assert interval.low < 7 / 12 < interval.high


def _ever_excluded(p: float, steps: int, rng: random.Random, inside) -> bool:
    successes = 0
    for n in range(1, steps + 1):
        successes += rng.random() < p
        if not inside(successes, n):
            return True
    return False


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8, 0.95])
def test_coverage_holds_at_every_n_at_once(p: float) -> None:
    """Watched after every attempt for 100 attempts, the 95 % sequence ever misses the true
    rate in at most 5 % of runs (plus Monte Carlo slack of three standard errors)."""
    rng = random.Random(1234)
    runs, level = 1500, math.log(20)
    misses = sum(
        _ever_excluded(p, 100, rng, lambda s, n: log_mixture(s, n, p) < level) for _ in range(runs)
    )
    slack = 3 * math.sqrt(0.05 * 0.95 / runs)
    assert misses / runs <= 0.05 + slack


def test_a_fixed_n_interval_watched_after_every_attempt_fails_that_bound() -> None:
    """Why a fixed-k interval cannot be used: checked after every attempt, the 95 % Wilson
    interval misses a fair coin in far more than 5 % of runs."""
    rng = random.Random(99)
    runs = 1000

    def inside(s: int, n: int) -> bool:
        interval = wilson_interval(s, n, 0.95)
        return interval.low <= 0.5 <= interval.high

    misses = sum(_ever_excluded(0.5, 100, rng, inside) for _ in range(runs))
    assert misses / runs > 0.15


@pytest.mark.parametrize("n", [2, 6, 7, 15])
def test_one_sided_mixture_matches_the_truncated_uniform_integral(n: int) -> None:
    # all passes, bar 0.5: the uniform mixture over (0.5, 1) is
    # (1/0.5) * integral of (q/0.5)^n dq = 2^(n+1) (1 - 0.5^(n+1)) / (n + 1); the 64-point
    # grid is its midpoint rule
    exact = 2 ** (n + 1) * (1 - 0.5 ** (n + 1)) / (n + 1)
    assert math.exp(log_one_sided(n, n, 0.5, above=True)) == pytest.approx(exact, rel=0.01)
    assert log_one_sided(0, n, 0.5, above=False) == pytest.approx(
        log_one_sided(n, n, 0.5, above=True)
    )


@pytest.mark.parametrize(("p", "bar"), [(0.5, 0.5), (0.7, 0.7), (0.45, 0.5), (0.9, 0.9)])
def test_the_sequential_bar_test_keeps_its_error_rate_when_watched(p: float, bar: float) -> None:
    """At the worst case (the true rate on or just below the bar) a wrong 'met' (or, at the
    bar, a wrong 'failed') within 200 attempts, looking after each, stays under 5 %."""
    rng = random.Random(4321)
    runs = 800
    wrong = 0
    for _ in range(runs):
        successes = 0
        for n in range(1, 201):
            successes += rng.random() < p
            decision = bar_decision(successes, n, bar, 0.95)
            if decision is not None:
                wrong += decision == ("failed" if p >= bar else "met")
                break
    slack = 3 * math.sqrt(0.05 * 0.95 / runs)
    assert wrong / runs <= 0.05 + slack
