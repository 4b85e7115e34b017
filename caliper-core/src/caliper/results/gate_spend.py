"""What ``--max-cost-per-attempt`` and ``--max-duration`` bars are judged on.

Each is a ceiling on a mean per attempt: a task's mean over its counted attempts, or the
run's mean over every counted attempt of every task (pooled: the run-wide cost per attempt
is what a budget divides by). The mean carries a two-sided Student-t interval at the gate's
confidence (:mod:`caliper.results.spread`), and with ``B`` bars in the gate a "failed"
also needs the lower end at ``1 − α/B`` above the ceiling, as rate bars do (Bonferroni).
Cost counts only attempts whose CLI reported one. Pure functions, no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from caliper.results.gate import COST, DURATION, Measured
from caliper.results.models import AttemptRecord, RunResults
from caliper.results.spend import attempt_costs, attempt_durations, counted
from caliper.results.spread import mean_interval
from caliper.results.stats import Interval

Key = tuple[str, str | None]


def _measured(values: list[float], confidence: float, family: int) -> Measured:
    if not values:
        return Measured(None, None, ceiling=True)
    mean = sum(values) / len(values)
    found = mean_interval(values, confidence)
    if found is None:
        return Measured(mean, None, trials=len(values), ceiling=True)
    interval = Interval(found.low, found.high, found.level, found.method)
    family_low: dict[int, float] = {}
    if family > 1:
        wide = mean_interval(values, 1.0 - (1.0 - confidence) / family)
        if wide is not None:
            family_low[family] = wide.low
    return Measured(mean, interval, trials=len(values), ceiling=True, family_low=family_low)


def measure_spend(results: RunResults, confidence: float, family: int = 1) -> dict[Key, Measured]:
    """Every mean a ceiling bar can be set on: each task's and the run's cost and agent
    time per counted attempt (``family``: the gate's number of bars)."""
    timeouts = results.meta.timeouts
    extract: dict[str, Callable[[Iterable[AttemptRecord]], list[float]]] = {
        COST: attempt_costs,
        DURATION: attempt_durations,
    }
    measure: dict[Key, Measured] = {}
    everything: list[AttemptRecord] = []
    for task in results.tasks:
        kept = counted(task.attempts, timeouts)
        everything.extend(kept)
        for metric, values_of in extract.items():
            measure[(metric, task.name)] = _measured(values_of(kept), confidence, family)
    for metric, values_of in extract.items():
        measure[(metric, None)] = _measured(values_of(everything), confidence, family)
    return measure
