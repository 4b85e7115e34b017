"""What a baseline pair says: does the skill help? Pure: two saved runs in, data out.

A baseline pair (``caliper run SPEC --baseline``) is the control arm (``a``, without what the
baseline left out) and the full arm (``b``) of one run. Its verdict is ``caliper compare
CONTROL FULL`` (:func:`caliper.results.compare.compare_runs`: the fixed-sequence procedure,
Fisher's exact test per task with Holm's correction, the stratified test for the whole run),
read as a lift ``Δ = full − control``:

* **helps**: a supported rise (compare's ``improved``);
* **hurts**: a supported drop (compare's ``regressed``);
* **no detectable difference**: neither, stated with the smallest lift this pair could have
  detected (:class:`LiftSensitivity`), since "no difference found" at a small k is no
  evidence that there is none.

Under ``--k auto`` each task stopped by the paired anytime-valid rule
(:mod:`caliper.runner.paired_adaptive`); its bounds stay valid however the run stopped, so the
gate (``--require-improvement``, ``--min-lift``) is judged on them there, and on compare's
interval for a fixed k.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from caliper.results import power as power_mod
from caliper.results.compare import (
    IMPROVED,
    NO_CHANGE,
    NOT_SIGNIFICANT,
    REGRESSED,
    RunComparison,
    compare_runs,
    comparison_data,
)
from caliper.results.models import RunResults
from caliper.results.sequential import difference_bounds
from caliper.results.stats import DEFAULT_CONFIDENCE, Interval, interval_data
from caliper.system import attrs_classes

HELPS = "helps"
HURTS = "hurts"
NO_DIFFERENCE = "no detectable difference"
UNMEASURED = "unmeasured"

_WORDS = {
    IMPROVED: HELPS,
    REGRESSED: HURTS,
    NOT_SIGNIFICANT: NO_DIFFERENCE,
    NO_CHANGE: NO_DIFFERENCE,
}


def lift_word(compare_verdict: str) -> str:
    """Compare's verdict (of control → full) as a baseline says it."""
    return _WORDS.get(compare_verdict, UNMEASURED)


@attrs_classes.frozen
class LiftSensitivity:
    """The smallest lift this pair could have detected, with chance ``power`` at ``level``.

    From ``control_rate`` (the control arm's rate over the measured tasks, held to
    [0.05, 0.5], where the tests' power tables hold: a rise from c is a drop of the failure
    rate from 1 − c, and Fisher's test and the stratified test treat both alike):
    ``task_lift`` for one task alone (at Holm's first step), ``overall_lift`` for the same
    lift on every task; ``None``: no lift, not even to 100 %, would be caught.
    """

    level: float
    power: float
    tasks: int
    attempts: float
    control_rate: float
    task_lift: float | None
    overall_lift: float | None


@attrs_classes.frozen
class SequentialLift:
    """Under ``--k auto``: the anytime-valid interval of the whole run's lift (the mean of
    the tasks' anytime-valid bounds, each at ``1 − α / (2T)`` per arm, so all hold together
    with chance ≥ ``1 − α``) and each task's."""

    overall: Interval
    tasks: dict[str, Interval]


@attrs_classes.frozen
class BaselineVerdict:
    """One engine's baseline pair, judged: compare's full comparison, read as a lift."""

    engine: str
    left_out: list[str]
    comparison: RunComparison
    verdict: str
    """``helps``, ``hurts``, ``no detectable difference`` or ``unmeasured`` (whole run)."""
    task_verdicts: dict[str, str]
    activation_verdict: str
    sensitivity: LiftSensitivity | None
    sequential: SequentialLift | None = None

    @property
    def lift(self) -> float | None:
        """The whole run's lift (full − control) over the tasks measured on both arms."""
        return self.comparison.delta

    @property
    def lift_interval(self) -> Interval | None:
        """The interval the gate judges the lift on: the anytime-valid one under ``--k
        auto``, else compare's (which holds 0 exactly when compare finds no change)."""
        if self.sequential is not None:
            return self.sequential.overall
        return self.comparison.delta_interval


def lift_sensitivity(comparison: RunComparison) -> LiftSensitivity | None:
    """How small a lift ``comparison`` (control → full) could have caught (see
    :class:`LiftSensitivity`)."""
    measured = [t for t in comparison.tasks if t.a_usable and t.b_usable]
    if not measured:
        return None
    tasks = len(measured)
    a_k = sum(t.a_usable for t in measured) / tasks
    b_k = sum(t.b_usable for t in measured) / tasks
    control = sum(t.a_successes for t in measured) / sum(t.a_usable for t in measured)
    control = round(min(0.5, max(0.05, control)), 2)
    failures = round(1.0 - control, 2)  # a lift from c is a drop of the failure rate from 1 − c
    alpha = comparison.alpha
    return LiftSensitivity(
        level=comparison.confidence,
        power=power_mod.DEFAULT_POWER,
        tasks=tasks,
        attempts=(a_k + b_k) / 2,
        control_rate=control,
        task_lift=power_mod.task_detectable_drop(
            round(a_k), round(b_k), power_mod.family_alpha(alpha, tasks), baseline=failures
        ),
        overall_lift=power_mod.overall_detectable_drop(tasks, a_k, b_k, alpha, baseline=failures),
    )


def sequential_lift(comparison: RunComparison) -> SequentialLift | None:
    """The anytime-valid lift intervals of a pair measured under ``--k auto`` (see
    :class:`SequentialLift`); ``None`` when no task was measured on both arms."""
    measured = [t for t in comparison.tasks if t.a_usable and t.b_usable]
    if not measured:
        return None
    bounds = {
        t.name: difference_bounds(
            (t.a_successes, t.a_usable),
            (t.b_successes, t.b_usable),
            comparison.confidence,
            len(comparison.tasks),
        )
        for t in measured
    }
    method = "anytime-valid (paired confidence sequences, Bonferroni)"
    level = comparison.confidence
    tasks = {
        name: Interval(max(-1.0, b.low), min(1.0, b.high), level, method)
        for name, b in bounds.items()
    }
    low = sum(i.low for i in tasks.values()) / len(tasks)
    high = sum(i.high for i in tasks.values()) / len(tasks)
    return SequentialLift(overall=Interval(low, high, level, method), tasks=tasks)


def judge_pair(
    control: RunResults,
    full: RunResults,
    *,
    engine: str = "",
    confidence: float = DEFAULT_CONFIDENCE,
    control_path: str | None = None,
    full_path: str | None = None,
) -> BaselineVerdict:
    """The verdict of a baseline pair: compare of ``control`` → ``full``, read as a lift."""
    comparison = compare_runs(
        control, full, a_path=control_path, b_path=full_path, confidence=confidence
    )
    sequential = sequential_lift(comparison) if full.meta.adaptive is not None else None
    verdict = lift_word(comparison.overall_verdict)
    tasks = {t.name: lift_word(t.verdict) for t in comparison.tasks}
    if sequential is not None:  # what the stopping rule decided on, not a fixed-k test
        verdict = interval_word(sequential.overall)
        tasks = {
            name: interval_word(sequential.tasks[name]) if name in sequential.tasks else UNMEASURED
            for name in tasks
        }
    return BaselineVerdict(
        engine=engine,
        left_out=list((full.meta.baseline or {}).get("left_out") or control.meta.ablated),
        comparison=comparison,
        verdict=verdict,
        task_verdicts=tasks,
        activation_verdict=lift_word(comparison.activation_overall_verdict),
        sensitivity=lift_sensitivity(comparison),
        sequential=sequential,
    )


def interval_word(interval: Interval) -> str:
    """An anytime-valid lift interval as a verdict: above 0 helps, below 0 hurts."""
    if interval.low > 0:
        return HELPS
    if interval.high < 0:
        return HURTS
    return NO_DIFFERENCE


def gate_failures(
    verdict: BaselineVerdict, *, require_improvement: bool, min_lift: float | None
) -> list[str]:
    """What a pair fails of ``--require-improvement`` and ``--min-lift D`` (empty: passed).

    ``--require-improvement`` asks for a supported lift (``helps``; under ``--k auto`` an
    anytime-valid interval above 0); ``--min-lift D`` asks for the lift's interval
    (:attr:`BaselineVerdict.lift_interval`) to lie wholly above D.
    """
    failures = []
    interval = verdict.lift_interval
    level = f"{verdict.comparison.confidence * 100:g}%"
    span = _span(interval)
    if require_improvement:
        helps = (
            interval is not None and interval.low > 0
            if verdict.sequential is not None
            else verdict.verdict == HELPS
        )
        if not helps:
            failures.append(
                f"--require-improvement: the skill's lift is not supported at {level} "
                f"({verdict.verdict}{span})"
            )
    if min_lift is not None and (interval is None or not interval.low > min_lift):
        where = (
            f"[{interval.low * 100:+.1f}, {interval.high * 100:+.1f}] pp"
            if interval is not None
            else "(none: no task was measured on both arms)"
        )
        failures.append(
            f"--min-lift {min_lift * 100:g} pp: the lift's {level} interval {where} does not "
            f"lie above {min_lift * 100:g} pp"
        )
    return failures


def _span(interval: Interval | None) -> str:
    if interval is None:
        return ""
    return f", interval [{interval.low * 100:+.1f}, {interval.high * 100:+.1f}] pp"


def verdict_data(verdict: BaselineVerdict) -> dict[str, Any]:
    """``verdict`` as plain data (``--format json``)."""
    data: dict[str, Any] = {
        "engine": verdict.engine,
        "left_out": verdict.left_out,
        "verdict": verdict.verdict,
        "lift": verdict.lift,
        "lift_interval": interval_data(verdict.lift_interval) if verdict.lift_interval else None,
        "task_verdicts": verdict.task_verdicts,
        "activation_verdict": verdict.activation_verdict,
        "sensitivity": attrs.asdict(verdict.sensitivity) if verdict.sensitivity else None,
        "sequential": None,
        "comparison": comparison_data(verdict.comparison),
    }
    if verdict.sequential is not None:
        data["sequential"] = {
            "p_values": "fixed-k: the comparison's p-values are not the verdict's test",
            "overall": interval_data(verdict.sequential.overall),
            "tasks": {k: interval_data(v) for k, v in verdict.sequential.tasks.items()},
        }
    return data


def pairs_data(verdicts: Sequence[BaselineVerdict], baseline_id: str) -> dict[str, Any]:
    """Every engine's pair of one baseline as plain data."""
    return {"baseline_id": baseline_id, "pairs": [verdict_data(v) for v in verdicts]}
