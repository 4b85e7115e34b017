"""Statistics for saved runs: pure functions, no I/O, standard library only.

Every rate Caliper prints comes with a confidence interval from here, and every verdict it
gives (a regression, a bar met) rests on a test from here. ``docs/statistics.md`` explains
each method in plain words; the unit tests check them against published reference values.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from statistics import NormalDist

import attrs

from caliper.results.interval import Interval as Interval  # re-exported

DEFAULT_CONFIDENCE = 0.95


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


@functools.lru_cache(maxsize=4096)
def wilson_cc_interval(
    successes: int, trials: int, confidence: float = DEFAULT_CONFIDENCE
) -> Interval | None:
    """The Wilson score interval with continuity correction (Newcombe 1998, method 4).

    Slightly wider than :func:`wilson_interval`; used where many rates are combined into one
    interval (compare's overall Δ), where the plain score limits of small samples add up to an
    interval that is too narrow. ``None`` for no trials.

    Remembered for the last 4,096 distinct arguments (intervals are immutable: a big run's
    tasks share a few dozen ``successes/trials`` pairs).
    """
    if trials < 0 or successes < 0 or successes > trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    if trials == 0:
        return None
    z = z_value(confidence)
    z2, n, p = z * z, trials, successes / trials
    low = 0.0
    if successes > 0:
        root = math.sqrt(max(0.0, z2 - 2.0 - 1.0 / n + 4.0 * p * (n * (1.0 - p) + 1.0)))
        low = max(0.0, (2.0 * n * p + z2 - 1.0 - z * root) / (2.0 * (n + z2)))
    high = 1.0
    if successes < trials:
        root = math.sqrt(max(0.0, z2 + 2.0 - 1.0 / n + 4.0 * p * (n * (1.0 - p) - 1.0)))
        high = min(1.0, (2.0 * n * p + z2 + 1.0 + z * root) / (2.0 * (n + z2)))
    return Interval(low=low, high=high, level=confidence, method="wilson-cc")


UNINFORMATIVE = "uninformative"
"""``method`` of the interval of a rate resting on fewer than :data:`MIN_INFORMATIVE_TRIALS`
tries: it is the whole of [0, 1], and reports say so in words instead of printing limits."""
MIN_INFORMATIVE_TRIALS = 3


def rate_interval(
    successes: int, trials: int, confidence: float = DEFAULT_CONFIDENCE
) -> Interval | None:
    """The interval every rate is shown with: :func:`wilson_cc_interval` from
    :data:`MIN_INFORMATIVE_TRIALS` tries on, the uninformative [0, 1] (``method``
    :data:`UNINFORMATIVE`) below, ``None`` for no trials.

    Exact coverage (every ``p`` of a fine grid and either side of every limit) is at least
    94.8% at 95% for 3 to 100 tries; the plain Wilson interval dips to 83–85% near 0 and 1.
    With one or two tries no interval says anything a reader can act on (Wilson's for 0/1
    excludes every rate above 79%), so none is claimed.
    """
    if trials < 0 or successes < 0 or successes > trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")
    if trials == 0:
        return None
    if trials < MIN_INFORMATIVE_TRIALS:
        return Interval(low=0.0, high=1.0, level=confidence, method=UNINFORMATIVE)
    return wilson_cc_interval(successes, trials, confidence)


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
    ``None`` is returned when none is left. One task gives its :func:`rate_interval`. For
    several, the variance of the mean of task rates is the larger of

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
        return rate_interval(kept[0][0], kept[0][1], confidence)
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


def newcombe_cc_difference_interval(
    a_successes: int,
    a_trials: int,
    b_successes: int,
    b_trials: int,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval | None:
    """Newcombe's hybrid score interval with continuity correction for ``p_b − p_a``.

    Method 11 of Newcombe (1998): :func:`newcombe_difference_interval` built from the two
    continuity-corrected Wilson intervals. Its exact coverage at 95% is at least 94.3% for
    every true change below 60 points at 3 to 20 tries a side (plain Newcombe dips to 86% at
    3 tries); ``docs/statistics.md`` lists the larger changes where it dips below.
    ``None`` when a side has no trials.
    """
    a = wilson_cc_interval(a_successes, a_trials, confidence)
    b = wilson_cc_interval(b_successes, b_trials, confidence)
    if a is None or b is None:
        return None
    pa, pb = a_successes / a_trials, b_successes / b_trials
    d = pb - pa
    low = d - math.sqrt((pb - b.low) ** 2 + (a.high - pa) ** 2)
    high = d + math.sqrt((b.high - pb) ** 2 + (pa - a.low) ** 2)
    return Interval(
        low=_clip(low, -1.0), high=_clip(high, -1.0), level=confidence, method="newcombe-cc"
    )


EXCLUDING_ZERO = ", excluding 0"
"""Suffix of an interval's ``method`` when :func:`agree_with_test` cut it at 0 (open there)."""
WIDENED_TO_ZERO = ", widened to 0"
"""Suffix of an interval's ``method`` when :func:`agree_with_test` stretched it to hold 0."""


def agree_with_test(interval: Interval | None, estimate: float, rejected: bool) -> Interval | None:
    """``interval`` made to agree with a test of "no change" (``rejected`` or not).

    The result is the confidence set whose test at Δ = 0 is that test and whose test at every
    other Δ is ``interval``'s own: it holds 0 exactly when the test does not reject. When the
    test does not reject, an interval that missed 0 is widened to reach it (coverage can only
    grow); when the test rejects, an interval that held 0 is cut there, keeping the side of
    ``estimate``, and is open at 0 (``method`` ends in :data:`EXCLUDING_ZERO`).
    """
    if interval is None:
        return None
    holds_zero = interval.low <= 0.0 <= interval.high
    if not rejected and not holds_zero:
        return attrs.evolve(
            interval,
            low=min(interval.low, 0.0),
            high=max(interval.high, 0.0),
            method=interval.method + WIDENED_TO_ZERO,
        )
    if rejected and holds_zero:
        if estimate >= 0.0:
            return attrs.evolve(interval, low=0.0, method=interval.method + EXCLUDING_ZERO)
        return attrs.evolve(interval, high=0.0, method=interval.method + EXCLUDING_ZERO)
    return interval


def paired_mean_difference_interval(
    pairs: Sequence[tuple[int, int, int, int]], confidence: float = DEFAULT_CONFIDENCE
) -> Interval | None:
    """An interval for the mean over tasks of ``p_b − p_a`` (compare's overall Δ).

    ``pairs`` holds ``(a_successes, a_trials, b_successes, b_trials)`` per matched task; pairs
    with an empty side are skipped. The tasks are taken as given (the same tasks on both
    sides, as the stratified test that decides the verdict takes them), so only each task's
    binomial noise counts, and the interval agrees with that test instead of also counting
    how differently the tasks changed. One task gives :func:`newcombe_cc_difference_interval`;
    for several, the MOVER combination (Zou & Donner 2008, "Construction of confidence limits
    about effect measures", Statistics in Medicine 27:1693-1702) of every rate's
    continuity-corrected Wilson limits for ``(1/T) Σ (p_b,t − p_a,t)``.
    """
    kept = [p for p in pairs if p[1] > 0 and p[3] > 0]
    if not kept:
        return None
    tasks = len(kept)
    centre = 0.0
    below = above = 0.0
    if tasks == 1:
        return newcombe_cc_difference_interval(*kept[0], confidence=confidence)
    for xa, na, xb, nb in kept:
        a = wilson_cc_interval(xa, na, confidence)
        b = wilson_cc_interval(xb, nb, confidence)
        assert a is not None and b is not None  # both sides have trials
        pa, pb = xa / na, xb / nb
        centre += pb - pa
        below += (pb - b.low) ** 2 + (a.high - pa) ** 2
        above += (b.high - pb) ** 2 + (pa - a.low) ** 2
    centre /= tasks
    return Interval(
        low=_clip(centre - math.sqrt(below) / tasks, -1.0),
        high=_clip(centre + math.sqrt(above) / tasks, -1.0),
        level=confidence,
        method="mover-wilson-cc",
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
