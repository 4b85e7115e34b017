"""Statistics for saved runs: pure functions, no I/O, standard library only.

Every rate Caliper prints comes with a confidence interval from here, and every verdict it
gives (a regression, a bar met) rests on a test from here. ``docs/statistics.md`` explains
each method in plain words; the unit tests check them against published reference values.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from statistics import NormalDist

import attrs

DEFAULT_CONFIDENCE = 0.95


@attrs.frozen
class Interval:
    """A two-sided confidence interval for a rate, both ends in ``[0, 1]``.

    ``level`` is the confidence it was computed at (e.g. ``0.95``); ``method`` names how
    (``"wilson"``, ...), so saved JSON and reports can say which interval they show.
    """

    low: float
    high: float
    level: float
    method: str

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies inside the interval (ends included)."""
        return self.low <= value <= self.high


def check_confidence(confidence: float) -> float:
    """Return ``confidence`` if it is a usable level (strictly between 0 and 1), else raise."""
    if not (0.0 < confidence < 1.0) or math.isnan(confidence):
        raise ValueError(f"a confidence level must lie strictly between 0 and 1, not {confidence}")
    return confidence


def z_value(confidence: float) -> float:
    """The two-sided standard normal quantile for ``confidence`` (1.959964 for 0.95)."""
    check_confidence(confidence)
    return NormalDist().inv_cdf(0.5 + confidence / 2.0)


def wilson_interval(
    successes: int, trials: int, confidence: float = DEFAULT_CONFIDENCE
) -> Interval | None:
    """The Wilson score interval for ``successes`` out of ``trials``; ``None`` for no trials.

    Wilson keeps good coverage at the small ``k`` Caliper runs with (3 to 10 attempts) and,
    unlike the plain normal interval, never collapses to a point at 0 or k successes.
    """
    if trials < 0 or successes < 0 or successes > trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    if trials == 0:
        return None
    z = z_value(confidence)
    p = successes / trials
    z2 = z * z
    denom = 1.0 + z2 / trials
    centre = (p + z2 / (2.0 * trials)) / denom
    half = (z / denom) * math.sqrt(p * (1.0 - p) / trials + z2 / (4.0 * trials * trials))
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return Interval(low=low, high=high, level=confidence, method="wilson")


def adjusted_rate(successes: int, trials: int, confidence: float) -> float:
    """The Agresti–Coull adjusted rate ``(successes + z²/2) / (trials + z²)``."""
    z2 = z_value(confidence) ** 2
    return (successes + z2 / 2.0) / (trials + z2)


def adjusted_rate_variance(successes: int, trials: int, confidence: float) -> float:
    """The sampling variance of one rate, on the Agresti–Coull adjusted counts.

    The rate is taken as ``(successes + z²/2) / (trials + z²)`` over ``trials + z²`` tries,
    so a task at 0/3 or 3/3 still carries the noise three tries really have (the plain
    ``p(1-p)/n`` would say zero). This is the within-task part of the aggregate intervals.
    """
    z2 = z_value(confidence) ** 2
    n = trials + z2
    p = (successes + z2 / 2.0) / n
    return p * (1.0 - p) / n


def _clip(value: float, low: float = 0.0, high: float = 1.0) -> float:
    return max(low, min(high, value))


def mean_rate_interval(
    counts: Sequence[tuple[int, int]], confidence: float = DEFAULT_CONFIDENCE
) -> Interval | None:
    """An interval for the mean of several tasks' success rates (the run's score).

    ``counts`` holds ``(successes, trials)`` per task; tasks with no trials are skipped, and
    ``None`` is returned when none is left. One task gives its Wilson interval. For several,
    the variance of the mean of task rates is the larger of

    * the within-task binomial noise, ``Σ var_t / T²`` (``var_t`` from
      :func:`adjusted_rate_variance`), and
    * the between-task spread, ``s² / T`` (``s²`` the sample variance of the task rates,
      which holds both the tasks' real differences and their binomial noise),

    i.e. a method-of-moments random-effects estimate (``σ²_between = max(0, s² − mean var_t)``
    added to the within noise), and the interval is the mean ± z·sd, clipped to [0, 1].
    """
    kept = [(s, n) for s, n in counts if n > 0]
    if not kept:
        return None
    if len(kept) == 1:
        return wilson_interval(kept[0][0], kept[0][1], confidence)
    rates = [s / n for s, n in kept]
    within = [adjusted_rate_variance(s, n, confidence) for s, n in kept]
    steps = [1.0 / n for _, n in kept]
    return _moment_interval(rates, steps, within, confidence, low=0.0, high=1.0, method="task-mean")


def _moment_interval(
    values: list[float],
    steps: list[float],
    within: list[float],
    confidence: float,
    *,
    low: float,
    high: float,
    method: str,
) -> Interval:
    tasks = len(values)
    centre = math.fsum(values) / tasks
    spread = statistics.variance(values) / tasks
    noise = math.fsum(within) / (tasks * tasks)
    # half a step of the lattice the mean moves on: a continuity correction for the small k
    correction = 0.5 * math.fsum(steps) / (tasks * tasks)
    half = z_value(confidence) * math.sqrt(max(spread, noise)) + correction
    return Interval(
        low=_clip(centre - half, low, high),
        high=_clip(centre + half, low, high),
        level=confidence,
        method=method,
    )


def newcombe_difference_interval(
    a_successes: int,
    a_trials: int,
    b_successes: int,
    b_trials: int,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval | None:
    """Newcombe's hybrid score interval for ``p_b − p_a`` (two independent samples).

    Method 10 of Newcombe (1998), "Interval estimation for the difference between independent
    proportions", Statistics in Medicine 17:873-890: built from the two Wilson intervals, so it
    stays inside [−1, 1] and behaves at 0/n and n/n. ``None`` when a side has no trials.
    """
    a = wilson_interval(a_successes, a_trials, confidence)
    b = wilson_interval(b_successes, b_trials, confidence)
    if a is None or b is None:
        return None
    pa, pb = a_successes / a_trials, b_successes / b_trials
    d = pb - pa
    low = d - math.sqrt((pb - b.low) ** 2 + (a.high - pa) ** 2)
    high = d + math.sqrt((b.high - pb) ** 2 + (pa - a.low) ** 2)
    return Interval(
        low=_clip(low, -1.0), high=_clip(high, -1.0), level=confidence, method="newcombe"
    )


def paired_mean_difference_interval(
    pairs: Sequence[tuple[int, int, int, int]], confidence: float = DEFAULT_CONFIDENCE
) -> Interval | None:
    """An interval for the mean over tasks of ``p_b − p_a`` (compare's overall Δ).

    ``pairs`` holds ``(a_successes, a_trials, b_successes, b_trials)`` per matched task; pairs
    with an empty side are skipped. One task gives Newcombe's interval; several use the same
    moment method as :func:`mean_rate_interval` on the per-task differences, with within-task
    noise ``var_a + var_b``. Pairing by task cancels how hard each task is, so only the
    spread of the *changes* between tasks widens the interval.
    """
    kept = [p for p in pairs if p[1] > 0 and p[3] > 0]
    if not kept:
        return None
    if len(kept) == 1:
        return newcombe_difference_interval(*kept[0], confidence=confidence)
    diffs = [xb / nb - xa / na for xa, na, xb, nb in kept]
    steps = [(1.0 / na + 1.0 / nb) / 2.0 for _, na, _, nb in kept]
    within = [
        adjusted_rate_variance(xa, na, confidence) + adjusted_rate_variance(xb, nb, confidence)
        for xa, na, xb, nb in kept
    ]
    return _moment_interval(
        diffs, steps, within, confidence, low=-1.0, high=1.0, method="paired-task-mean"
    )


def interval_data(interval: Interval | None) -> dict | None:
    """``interval`` as plain JSON data (``low``, ``high``, ``level``, ``method``), or ``None``."""
    if interval is None:
        return None
    return {
        "low": interval.low,
        "high": interval.high,
        "level": interval.level,
        "method": interval.method,
    }
