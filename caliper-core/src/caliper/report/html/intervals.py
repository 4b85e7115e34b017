"""The confidence intervals the pages draw, from :mod:`caliper.results.stats`.

One place turns counts into ``{"low", "high", "level", "method"}`` dicts so every page shows
the same interval for the same rate.
"""

from __future__ import annotations

from caliper.results.stats import Interval, wilson_interval


def interval_data(interval: Interval | None) -> dict | None:
    """``interval`` as plain data (``None`` stays ``None``)."""
    if interval is None:
        return None
    return {
        "low": interval.low,
        "high": interval.high,
        "level": interval.level,
        "method": interval.method,
    }


def rate_interval(successes: int, trials: int) -> dict | None:
    """The Wilson interval of ``successes`` out of ``trials`` as data (``None`` for none)."""
    return interval_data(wilson_interval(successes, trials))
