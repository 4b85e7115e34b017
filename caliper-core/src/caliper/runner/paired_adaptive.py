"""``caliper run --baseline --k auto``: each task stops once the difference between the arms
is decided.

The two arms of a baseline get a task's attempts in **pairs** (attempt n on the control arm
and attempt n on the full arm are handed out together), and after every finished attempt the
task's *difference interval* is checked: from each arm's anytime-valid confidence sequence
(:func:`caliper.results.sequential.confidence_sequence`) at level ``1 − α / (2T)`` (``T``
tasks, two arms: Bonferroni), the lift ``Δ = full − control`` lies in
``[low_full − high_control, high_full − low_control]`` at every number of attempts at once
with chance at least ``1 − α / T``, so stopping whenever it is decided keeps every task's
error chance under ``α / T`` and the run's under ``α``. A task stops when, with at least
``--min-k`` usable attempts on each arm:

* the interval lies above the bar (``--min-lift D``, else 0): the skill **helps** (by more than
  D);
* it lies below the bar: the skill **hurts** (bar 0) or its lift is **below** D;
* it is narrower than ``--precision W`` (the difference is known well enough, whatever it is);
* or ``--max-k`` pairs were handed out (undecided).

Both arms' saved runs get the same ``stop_reason`` per task and ``meta.adaptive`` names the
method (:data:`PAIRED_METHOD`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from caliper.results.models import AttemptRecord, Outcome
from caliper.results.sequential import difference_bounds
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.runner.adaptive import AdaptiveSettings
    from caliper.runner.run.prepare import PreparedRun

PAIRED_METHOD = "paired anytime-valid difference interval (confidence sequences, Bonferroni)"
"""``meta.adaptive.method`` of a baseline run that stopped by :class:`PairedAdaptive`."""


def _pct(value: float) -> str:
    return f"{value * 100:+.1f} pp"


def pair_stop_reason(
    settings: AdaptiveSettings,
    lift_bar: float,
    control: tuple[int, int],
    full: tuple[int, int],
    tasks: int,
) -> str | None:
    """Why a task of a baseline may stop with ``control``/``full`` ``(successes, usable)``,
    or ``None`` when it must go on (the ``--max-k`` limit is the caller's)."""
    if min(control[1], full[1]) < max(settings.min_k, 1):
        return None
    bounds = difference_bounds(control, full, settings.confidence, tasks)
    span = f"[{_pct(bounds.low)}, {_pct(bounds.high)}]"
    level = f"{settings.confidence * 100:g}%"
    if bounds.low > lift_bar:
        what = "the skill helps" if lift_bar == 0 else f"the lift is above {_pct(lift_bar)}"
        return f"decided: {what} (anytime-valid {level} difference interval {span})"
    if bounds.high < lift_bar:
        what = "the skill hurts" if lift_bar == 0 else f"the lift is below {_pct(lift_bar)}"
        return f"decided: {what} (anytime-valid {level} difference interval {span})"
    if settings.precision is not None and bounds.width < settings.precision:
        return (
            f"precise enough: the anytime-valid {level} difference interval {span} is narrower "
            f"than {settings.precision * 100:g} pp"
        )
    return None


@attrs_classes.define
class _Arm:
    scheduled: int = 0
    finished: int = 0
    successes: int = 0
    usable: int = 0


@attrs_classes.define
class _PairTask:
    pairs: int = 0
    arms: dict[str, _Arm] = attrs.field(factory=dict)
    reason: str | None = None


class PairedAdaptive:
    """The ``--k auto`` bookkeeping of one engine's two arms (thread-safe); each arm's key
    gets a :class:`ArmView` the scheduler talks to as it does to an
    :class:`~caliper.runner.adaptive.AdaptiveK`."""

    def __init__(
        self,
        settings: AdaptiveSettings,
        task_names: Sequence[str],
        arm_keys: Sequence[str],
        lift_bar: float = 0.0,
    ) -> None:
        self.settings = settings
        self.lift_bar = lift_bar
        self.arm_keys = tuple(arm_keys)
        self._tasks = {
            name: _PairTask(arms={key: _Arm() for key in self.arm_keys}) for name in task_names
        }
        self._lock = threading.Lock()

    def view(self, key: str) -> ArmView:
        """What the scheduler sees for the arm ``key``."""
        return ArmView(self, key)

    def observe(self, key: str, record: AttemptRecord) -> None:
        """Count a finished attempt of arm ``key`` and decide whether its task is done."""
        with self._lock:
            task = self._tasks.get(record.task_name)
            if task is None:
                return
            arm = task.arms[key]
            arm.finished += 1
            if record.outcome.scored(self.settings.timeouts):
                arm.usable += 1
                arm.successes += record.outcome is Outcome.PASS
            if task.reason is None:
                control, full = (task.arms[k] for k in self.arm_keys)
                task.reason = pair_stop_reason(
                    self.settings,
                    self.lift_bar,
                    (control.successes, control.usable),
                    (full.successes, full.usable),
                    len(self._tasks),
                )
            self._max_k_reached(task)

    def lost(self, key: str, task_name: str) -> None:
        """An attempt of arm ``key`` that ended without a record: no longer in flight."""
        with self._lock:
            task = self._tasks.get(task_name)
            if task is not None:
                task.arms[key].finished += 1
                self._max_k_reached(task)

    def _max_k_reached(self, task: _PairTask) -> None:
        if task.reason is not None:
            return
        if all(arm.finished >= self.settings.max_k for arm in task.arms.values()):
            control, full = (task.arms[k] for k in self.arm_keys)
            bounds = difference_bounds(
                (control.successes, control.usable),
                (full.successes, full.usable),
                self.settings.confidence,
                len(self._tasks),
            )
            task.reason = (
                f"--max-k {self.settings.max_k} reached (difference undecided; anytime-valid "
                f"interval [{_pct(bounds.low)}, {_pct(bounds.high)}])"
            )

    def next_jobs(
        self, key: str, free: int, blocked: Callable[[str], bool]
    ) -> list[tuple[str, int]]:
        """Arm ``key``'s next attempts: first those it owes (the other arm already has that
        pair's attempt), then up to ``free`` new pairs to the open tasks with the fewest."""
        jobs: list[tuple[str, int]] = []
        with self._lock:
            for name, task in self._tasks.items():
                arm = task.arms[key]
                while arm.scheduled < task.pairs:
                    arm.scheduled += 1
                    jobs.append((name, arm.scheduled))
            for _ in range(max(free - len(jobs), 0)):
                open_tasks = [
                    (task.pairs, name)
                    for name, task in self._tasks.items()
                    if task.reason is None
                    and task.pairs < self.settings.max_k
                    and not blocked(name)
                    and self._wanted(task)
                ]
                if not open_tasks:
                    break
                _, name = min(open_tasks)
                task = self._tasks[name]
                task.pairs += 1
                task.arms[key].scheduled += 1
                jobs.append((name, task.pairs))
        return jobs

    def _wanted(self, task: _PairTask) -> bool:
        """A new pair is started only while the pairs running could still be needed: until
        they would reach ``--min-k``, then one pair at a time."""
        done = min(arm.finished for arm in task.arms.values())
        usable = min(arm.usable for arm in task.arms.values())
        in_flight = task.pairs - done
        return usable + in_flight < max(self.settings.min_k, 1) or in_flight == 0

    def reasons(self) -> dict[str, str]:
        """Why each task stopped (the same for both arms)."""
        with self._lock:
            return {name: t.reason for name, t in self._tasks.items() if t.reason is not None}


@attrs_classes.frozen
class ArmView:
    """One arm of a :class:`PairedAdaptive`, with the methods the scheduler calls."""

    pair: PairedAdaptive
    key: str

    @property
    def settings(self) -> AdaptiveSettings:
        """The ``--k auto`` settings."""
        return self.pair.settings

    def observe(self, record: AttemptRecord) -> None:
        """Count a finished attempt of this arm."""
        self.pair.observe(self.key, record)

    def lost(self, task_name: str) -> None:
        """An attempt of this arm ended without a record."""
        self.pair.lost(self.key, task_name)

    def next_jobs(self, free: int, blocked: Callable[[str], bool]) -> list[tuple[str, int]]:
        """This arm's next attempts (see :meth:`PairedAdaptive.next_jobs`)."""
        return self.pair.next_jobs(self.key, free, blocked)

    def reasons(self) -> dict[str, str]:
        """Why each task stopped."""
        return self.pair.reasons()


def paired_adaptive(
    lift_bar: float, arms_by_engine: Mapping[str, tuple[str, str]]
) -> Callable[[Mapping[str, PreparedRun]], dict[str, ArmView]]:
    """What :class:`~caliper.runner.run.compose.Tie` calls to make ``--k auto``'s
    bookkeeping: one :class:`PairedAdaptive` per engine over its ``(control, full)`` keys."""

    def make(runs: Mapping[str, PreparedRun]) -> dict[str, ArmView]:
        views: dict[str, ArmView] = {}
        for control_key, full_key in arms_by_engine.values():
            run = runs[full_key]
            settings = run.options.adaptive
            assert settings is not None
            names = [task.name for task in run.spec.tasks]
            pair = PairedAdaptive(settings, names, (control_key, full_key), lift_bar)
            views[control_key] = pair.view(control_key)
            views[full_key] = pair.view(full_key)
        return views

    return make
