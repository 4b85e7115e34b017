"""``compare``: did cost or agent time per attempt change, per task and over the run?

Each measure (reported cost in USD, agent time in seconds) is its own family of tests, under
the same rule as the success rates (:func:`caliper.results.significance.gatekept_adjust`): the
whole run first at the full level, by the permutation test stratified by task on the mean
over matched tasks of ``mean(b) − mean(a)``; the matched tasks, with Holm's correction,
only when the run rejects. A task's test is the two-sided permutation test on the
difference of its means (:mod:`caliper.results.permutation`). Counted attempts only (the
unusable slice apart); cost only where the CLI reported one. Pure functions, no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Iterable, Sequence

from caliper.results.models import AttemptRecord, RunResults
from caliper.results.permutation import each_permutation_p, stratified_permutation_p
from caliper.results.significance import gatekept_adjust
from caliper.results.spend import attempt_costs, attempt_durations, counted
from caliper.system import attrs_classes

INCREASED = "increased"
DECREASED = "decreased"
NOT_SIGNIFICANT = "not significant"
NO_CHANGE = "no change"
UNMEASURED = "unmeasured"
METHOD = (
    "two-sided permutation test on the difference of means (stratified by task for the run; "
    "its normal approximation past 100 tasks)"
)

EXTRACT: dict[str, Callable[[Iterable[AttemptRecord]], list[float]]] = {
    "cost": attempt_costs,
    "duration": attempt_durations,
}


@attrs_classes.frozen
class SpendChange:
    """One measure (``cost`` or ``duration``) of one task, or of the run (``task`` None).

    ``delta`` is ``b_mean − a_mean`` for a task and the mean over matched tasks of that
    difference for the run; ``p_adjusted`` is after the family's correction; ``verdict`` is
    ``increased`` / ``decreased`` (a supported change), ``not significant``, ``no change`` or
    ``unmeasured``.
    """

    metric: str
    task: str | None
    a_n: int
    b_n: int
    a_mean: float | None
    b_mean: float | None
    a_median: float | None
    b_median: float | None
    delta: float | None
    p_value: float | None
    p_adjusted: float | None
    verdict: str


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def _verdict(delta: float | None, p_adjusted: float | None, alpha: float) -> str:
    if delta is None or p_adjusted is None:
        return UNMEASURED
    if abs(delta) < 1e-12:
        return NO_CHANGE
    if p_adjusted <= alpha:
        return INCREASED if delta > 0 else DECREASED
    return NOT_SIGNIFICANT


def _counted(results: RunResults) -> dict[str, list[AttemptRecord]]:
    """Each task's attempts the spend is measured over, by task name."""
    timeouts = results.meta.timeouts
    return {t.name: counted(t.attempts, timeouts) for t in results.tasks}


def _values(kept: dict[str, list[AttemptRecord]], metric: str) -> dict[str, list[float]]:
    extract = EXTRACT[metric]
    return {name: extract(attempts) for name, attempts in kept.items()}


def _family(
    metric: str, a: dict[str, list[float]], b: dict[str, list[float]], alpha: float
) -> list[SpendChange]:
    names = [name for name in b if name in a]
    measured = [n for n in names if a[n] and b[n]]
    run_p = stratified_permutation_p([(a[n], b[n]) for n in measured])
    task_p = dict(zip(measured, each_permutation_p([(a[n], b[n]) for n in measured]), strict=True))
    adjusted: dict[str, float] = {}
    run_adjusted = None
    if run_p is not None:
        ordered = [task_p[n] for n in measured]
        run_adjusted, task_adjusted = gatekept_adjust(run_p, [p for p in ordered if p is not None])
        adjusted = dict(zip(measured, task_adjusted, strict=True))
    every_a = [v for n in names for v in a[n]]
    every_b = [v for n in names for v in b[n]]
    run_delta = (
        math.fsum(_mean(b[n]) - _mean(a[n]) for n in measured) / len(measured)  # type: ignore[operator]
        if measured
        else None
    )
    changes = [
        SpendChange(
            metric,
            None,
            len(every_a),
            len(every_b),
            _mean(every_a),
            _mean(every_b),
            _median(every_a),
            _median(every_b),
            run_delta,
            run_p,
            run_adjusted,
            _verdict(run_delta, run_adjusted, alpha),
        )
    ]
    for name in names:
        a_mean, b_mean = _mean(a[name]), _mean(b[name])
        delta = b_mean - a_mean if a_mean is not None and b_mean is not None else None
        changes.append(
            SpendChange(
                metric,
                name,
                len(a[name]),
                len(b[name]),
                a_mean,
                b_mean,
                _median(a[name]),
                _median(b[name]),
                delta,
                task_p.get(name),
                adjusted.get(name),
                _verdict(delta, adjusted.get(name), alpha),
            )
        )
    return changes


def compare_spend(a: RunResults, b: RunResults, alpha: float) -> list[SpendChange]:
    """Every cost and agent-time change, the run's first within each measure."""
    changes: list[SpendChange] = []
    a_kept, b_kept = _counted(a), _counted(b)
    for metric in EXTRACT:
        changes += _family(metric, _values(a_kept, metric), _values(b_kept, metric), alpha)
    return changes
