"""Exact binomial tails and the Clopper–Pearson interval, for the CI gate's decisions.

The Clopper–Pearson interval inverts two one-sided exact binomial tests, so each of its ends
misses the true rate with chance at most ``(1 − confidence) / 2`` for every true rate and
every number of attempts (a guarantee Wilson's interval does not give). Pure functions,
standard library only.
"""

from __future__ import annotations

import math

from caliper.results.stats import Interval

_BISECTIONS = 60


def _log_pmf(successes: int, trials: int, p: float) -> float:
    log_comb = (
        math.lgamma(trials + 1) - math.lgamma(successes + 1) - math.lgamma(trials - successes + 1)
    )
    return log_comb + successes * math.log(p) + (trials - successes) * math.log1p(-p)


def tail_at_most(successes: int, trials: int, p: float) -> float:
    """``P(X ≤ successes)`` for ``X ~ Binomial(trials, p)``."""
    if successes < 0:
        return 0.0
    if successes >= trials or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    return min(1.0, math.fsum(math.exp(_log_pmf(i, trials, p)) for i in range(successes + 1)))


def tail_at_least(successes: int, trials: int, p: float) -> float:
    """``P(X ≥ successes)`` for ``X ~ Binomial(trials, p)``."""
    if successes <= 0:
        return 1.0
    if successes > trials or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    return min(
        1.0, math.fsum(math.exp(_log_pmf(i, trials, p)) for i in range(successes, trials + 1))
    )


def _solve(tail, target: float) -> float:
    """The ``p`` in ``(0, 1)`` where the increasing ``tail(p)`` crosses ``target``."""
    lo, hi = 0.0, 1.0
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2
        if tail(mid) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson_bounds(successes: int, trials: int, one_sided: float) -> tuple[float, float]:
    """The lower and upper exact bounds, each missing with chance at most ``one_sided``."""
    if trials <= 0:
        return 0.0, 1.0
    if not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    low = (
        0.0 if successes == 0 else _solve(lambda p: tail_at_least(successes, trials, p), one_sided)
    )
    high = (
        1.0
        if successes == trials
        else _solve(lambda p: 1.0 - tail_at_most(successes, trials, p), 1.0 - one_sided)
    )
    return low, high


def clopper_pearson_interval(successes: int, trials: int, confidence: float) -> Interval | None:
    """The two-sided Clopper–Pearson interval at ``confidence``; ``None`` for no trials."""
    if trials <= 0:
        return None
    low, high = clopper_pearson_bounds(successes, trials, (1.0 - confidence) / 2.0)
    return Interval(low, high, confidence, "clopper-pearson")
