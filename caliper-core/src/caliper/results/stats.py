"""Statistics for saved runs: pure functions, no I/O, standard library only.

Every rate Caliper prints comes with a confidence interval from here, and every verdict it
gives (a regression, a bar met) rests on a test from here. ``docs/statistics.md`` explains
each method in plain words; the unit tests check them against published reference values.
"""

from __future__ import annotations

import math
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
