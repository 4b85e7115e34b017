"""The confidence interval of a rate (light: ``caliper list`` shows saved ones without the
statistics of :mod:`caliper.results.stats`, which re-exports it)."""

from __future__ import annotations

from caliper.system import attrs_classes


@attrs_classes.frozen
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
