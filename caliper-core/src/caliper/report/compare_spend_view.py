"""``compare``'s cost and agent-time changes in words, for the text, Markdown and HTML views."""

from __future__ import annotations

from collections.abc import Sequence

from caliper.results.compare_spend import UNMEASURED, SpendChange
from caliper.results.gate import COST, format_measure

LABELS = {COST: "Cost per attempt", "duration": "Agent time per attempt"}


def _value(metric: str, value: float | None) -> str:
    return "—" if value is None else format_measure(metric, value)


def _signed(metric: str, value: float) -> str:
    return ("+" if value > 0 else "−" if value < 0 else "") + format_measure(metric, abs(value))


def change_cells(change: SpendChange) -> list[str]:
    """``[what, before → after (mean), Δ, p (adjusted), verdict]`` for one change."""
    where = "run" if change.task is None else change.task
    means = f"{_value(change.metric, change.a_mean)} → {_value(change.metric, change.b_mean)}"
    delta = "—" if change.delta is None else _signed(change.metric, change.delta)
    p = "—" if change.p_adjusted is None else f"{change.p_adjusted:.3g}"
    return [f"{LABELS[change.metric]} ({where})", means, delta, p, change.verdict]


def shown_changes(changes: Sequence[SpendChange]) -> list[SpendChange]:
    """The changes worth a line: measured ones (a measure no attempt reported is left out,
    and said once by :func:`unmeasured_note`)."""
    return [c for c in changes if c.verdict != UNMEASURED]


def unmeasured_note(changes: Sequence[SpendChange]) -> str | None:
    """``Cost: not reported by the agent CLI on either side`` when no cost could be compared."""
    runs = [c for c in changes if c.task is None and c.verdict == UNMEASURED]
    if not runs:
        return None
    names = ", ".join(LABELS[c.metric].lower() for c in runs)
    return f"{names}: not measured on both sides (the agent CLI reported none)"
