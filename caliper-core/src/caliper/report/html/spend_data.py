"""The run page's cost-and-time table as data (one row per task, then the run)."""

from __future__ import annotations

from typing import Any

from caliper.report.spend_view import (
    SPREAD_NOTE,
    cost_spread_text,
    cost_total_text,
    time_text,
    wall_text,
)
from caliper.results.models import RunResults
from caliper.results.spend import spend_of


def spend_rows(results: RunResults, confidence: float) -> dict[str, Any]:
    """``{"note": …, "rows": [{"name", "cost", "cost_spread", "time", "wall"}, …]}``; the last row
    is the run's (every counted attempt pooled)."""
    policy = results.meta.timeouts
    rows = []
    parts = [(t.name, t.attempts) for t in results.tasks]
    parts.append(("run", [a for t in results.tasks for a in t.attempts]))
    for name, attempts in parts:
        spend = spend_of(attempts, confidence, policy)
        rows.append(
            {
                "name": name,
                "cost": cost_total_text(spend),
                "cost_spread": cost_spread_text(spend),
                "time": time_text(spend),
                "wall": wall_text(spend),
            }
        )
    return {"note": SPREAD_NOTE, "rows": rows}
