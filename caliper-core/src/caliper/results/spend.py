"""Cost and agent time as measured objectives: per attempt, per task and per run.

An attempt's cost is what its agent CLI reported in USD (``usage.cost_usd``), its earlier
tries' included (money spent is spent); no price table is applied, so an attempt whose CLI
reported no cost has none. Its agent time is the scored try's ``duration_seconds``; its wall
time is every try's agent time plus the waits between tries (:func:`attempt_wall`). Counted
attempts are those the token totals count (left-out infra and judge errors apart). Pure
functions, no I/O; ``docs/results.md`` says how to read them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from caliper.results.models import TIMEOUTS_FAILURE, AttemptRecord, Outcome, RunResults
from caliper.results.scoring import left_out_outcomes
from caliper.results.spread import Spread, spread_of
from caliper.results.stats import DEFAULT_CONFIDENCE
from caliper.system import attrs_classes


def attempt_cost(record: AttemptRecord) -> float | None:
    """The USD the CLI reported for ``record`` and its earlier tries (``None``: none did)."""
    if not record.tries:  # the common case, without building the lists
        cost = record.usage.cost_usd if record.usage is not None else None
        return None if cost is None else math.fsum((cost,))
    costs = [t.usage.cost_usd for t in record.tries if t.usage is not None]
    costs.append(record.usage.cost_usd if record.usage is not None else None)
    known = [cost for cost in costs if cost is not None]
    return math.fsum(known) if known else None


def attempt_wall(record: AttemptRecord) -> float | None:
    """The seconds ``record`` took from its first try's start to its scored try's end: every
    try's agent time and the waits between them (``None`` when the scored try has none)."""
    if record.duration_seconds is None:
        return None
    if not record.tries:
        return math.fsum((record.duration_seconds,))
    earlier = ((t.duration_seconds or 0.0) + (t.waited_seconds or 0.0) for t in record.tries)
    return math.fsum([record.duration_seconds, *earlier])


@attrs_classes.frozen
class Spend:
    """Cost and agent time of a set of attempts.

    ``cost`` / ``duration`` spread over the counted attempts that reported one (``None``
    when none did); ``cost_reported`` says how many of the ``attempts`` that is.
    ``cost_per_success`` is the reported cost over the passed attempts, ``None`` when no
    attempt passed or some counted attempt reported no cost (the ratio would be too low).
    """

    attempts: int
    successes: int
    cost_reported: int
    cost: Spread | None
    duration: Spread | None
    cost_total: float | None
    cost_per_success: float | None
    wall: Spread | None = None
    """Wall time per attempt (:func:`attempt_wall`): differs from ``duration`` by retries."""

    def data(self) -> dict[str, object]:
        """Plain JSON data (``cost`` and ``duration`` as :meth:`Spread.data`)."""
        return {
            "attempts": self.attempts,
            "successes": self.successes,
            "cost_reported": self.cost_reported,
            "cost_total_usd": self.cost_total,
            "cost_per_attempt_usd": self.cost.data() if self.cost else None,
            "cost_per_success_usd": self.cost_per_success,
            "agent_seconds": self.duration.data() if self.duration else None,
            "wall_seconds": self.wall.data() if self.wall else None,
        }


def counted(
    attempts: Iterable[AttemptRecord], timeouts: str = TIMEOUTS_FAILURE
) -> list[AttemptRecord]:
    """The attempts the spend is measured over (left-out ones apart)."""
    left_out = left_out_outcomes(timeouts)
    return [record for record in attempts if record.outcome not in left_out]


def attempt_costs(attempts: Iterable[AttemptRecord]) -> list[float]:
    """The reported cost of each attempt that reported one."""
    return [c for c in (attempt_cost(r) for r in attempts) if c is not None]


def attempt_durations(attempts: Iterable[AttemptRecord]) -> list[float]:
    """The agent time of each attempt that has one."""
    return [r.duration_seconds for r in attempts if r.duration_seconds is not None]


def spend_of(
    attempts: Iterable[AttemptRecord],
    confidence: float = DEFAULT_CONFIDENCE,
    timeouts: str = TIMEOUTS_FAILURE,
) -> Spend:
    """The :class:`Spend` of ``attempts`` under a run's ``timeouts`` policy."""
    left_out = left_out_outcomes(timeouts)
    kept = successes = 0
    costs: list[float] = []
    durations: list[float] = []
    walls: list[float] = []
    fsum, passed = math.fsum, Outcome.PASS
    for record in attempts:  # one pass: counted, attempt_costs, durations and walls at once
        outcome = record.outcome
        if outcome in left_out:
            continue
        kept += 1
        successes += outcome is passed
        seconds = record.duration_seconds
        if record.tries:
            cost = attempt_cost(record)
            wall = attempt_wall(record)
        else:  # attempt_cost's and attempt_wall's own no-tries case, without two calls on
            # a loop a big report runs twice per attempt (~60 ms at 50,000 attempts)
            usage = record.usage
            cost = usage.cost_usd if usage is not None else None
            cost = None if cost is None else fsum((cost,))
            wall = None if seconds is None else fsum((seconds,))
        if cost is not None:
            costs.append(cost)
        if seconds is not None:
            durations.append(seconds)
        if wall is not None:
            walls.append(wall)
    total = math.fsum(costs) if costs else None
    complete = bool(costs) and len(costs) == kept
    duration = spread_of(durations, confidence)
    # Without retries every wall time is its agent time: the same values, the same spread.
    wall = duration if _same_values(walls, durations) else spread_of(walls, confidence)
    return Spend(
        attempts=kept,
        successes=successes,
        cost_reported=len(costs),
        cost=spread_of(costs, confidence),
        duration=duration,
        wall=wall,
        cost_total=total,
        cost_per_success=total / successes
        if complete and successes and total is not None
        else None,
    )


def _same_values(a: list[float], b: list[float]) -> bool:
    """Whether ``a`` and ``b`` hold the same floats, signs of zero included."""
    return len(a) == len(b) and all(
        x == y and math.copysign(1.0, x) == math.copysign(1.0, y) for x, y in zip(a, b, strict=True)
    )


def spend_data(results: RunResults, confidence: float = DEFAULT_CONFIDENCE) -> dict[str, object]:
    """The ``spend`` block of ``caliper report --format json``: the run's and each task's
    :meth:`Spend.data`, with how the spread is given."""
    policy = results.meta.timeouts
    every = [a for t in results.tasks for a in t.attempts]
    return {
        "confidence": confidence,
        "spread": "median and quartiles (inclusive method); mean with a Student-t interval",
        "cost_source": "usage.cost_usd as the agent CLI reported it (no price table)",
        "run": spend_of(every, confidence, policy).data(),
        "tasks": {t.name: spend_of(t.attempts, confidence, policy).data() for t in results.tasks},
    }
