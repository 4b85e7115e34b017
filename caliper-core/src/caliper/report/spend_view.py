"""Cost and agent time in words, shared by the text, Markdown and HTML reports.

Each figure is a median with its interquartile range and a mean with its Student-t
interval (:mod:`caliper.results.spread`); a CLI that reported no cost is said to, since no
price table is applied.
"""

from __future__ import annotations

from caliper.results.measures import COST, DURATION, format_fraction, format_measure
from caliper.results.spend import Spend
from caliper.results.spread import Spread

NO_COST = "not reported by the agent CLI (no price table is applied)"


def spread_text(spread: Spread, metric: str) -> str:
    """``median $0.25 (IQR $0.2–$0.3), mean $0.26 [95%: $0.21–$0.31]``."""

    def shown(value: float) -> str:
        return format_measure(metric, value)

    text = (
        f"median {shown(spread.median)} (IQR {shown(spread.q1)}–{shown(spread.q3)}), "
        f"mean {shown(spread.mean)}"
    )
    interval = spread.mean_interval
    if interval is not None:
        level = format_fraction(interval.level)
        text += f" [{level}: {shown(max(interval.low, 0.0))}–{shown(interval.high)}]"
    return text


def cost_total_text(spend: Spend) -> str:
    """``$0.75 reported by 3 of 3 attempts · $0.25 per passed attempt`` (or :data:`NO_COST`)."""
    if spend.cost_total is None:
        return NO_COST
    text = (
        f"{format_measure(COST, spend.cost_total)} reported by {spend.cost_reported} of "
        f"{spend.attempts} attempts"
    )
    if spend.cost_per_success is not None:
        text += f" · {format_measure(COST, spend.cost_per_success)} per passed attempt"
    elif spend.successes == 0:
        text += " · no attempt passed"
    return text


def cost_spread_text(spend: Spend) -> str:
    """The cost per attempt's spread (``—`` when no attempt reported a cost)."""
    return spread_text(spend.cost, COST) if spend.cost is not None else "—"


def time_text(spend: Spend) -> str:
    """The agent time per attempt's spread (``—`` when no attempt has a duration)."""
    return spread_text(spend.duration, DURATION) if spend.duration is not None else "—"


def wall_text(spend: Spend) -> str:
    """The wall time per attempt's spread, retries and their waits included (``—``: none)."""
    return spread_text(spend.wall, DURATION) if spend.wall is not None else "—"


SPREAD_NOTE = "median (IQR), mean [Student-t interval, what cost and time bars are judged on]"
