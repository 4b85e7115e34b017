"""Adaptive k (``caliper run --k auto --max-k N [--min-k M] [--margin D] [--precision W]``).

Each task gets attempts only while they can still change a decision. After every finished
attempt the task's usable attempts are checked:

* its bar ``b`` (``--min-score``: a ``TASK=x`` bar, else the run-wide one, applied per task)
  is **met** or **failed** once the truncated sequential probability ratio test of
  :func:`caliper.results.sequential.design` crosses one of its boundaries: wrong "met"
  (true rate ≤ b) and wrong "failed" (true rate ≥ b + margin) each have chance at most
  ``α = 1 − confidence`` (the failed side shared among the gate's bars), computed exactly
  for ``--max-k`` attempts — the decision the CI gate (:mod:`caliper.results.gate`) then
  reads back from the same attempts;
* or the bar can no longer be met within ``--max-k`` and the gate's outcome is settled (an
  inconclusive bar fails the gate under ``--inconclusive fail``; under ``pass`` the task goes
  on while it can still fail, and with ``--precision`` it goes on towards that);
* or its anytime-valid interval is narrower than ``--precision W``;
* or ``--max-k`` attempts were scheduled.

No task stops before ``--min-k`` usable attempts. The boundaries hold for any number of
attempts up to ``--max-k``, so stopping at the first crossing keeps the error chances.

The scheduler asks :meth:`AdaptiveK.next_jobs` for work whenever a worker is free, so at most
``--workers`` attempts are in flight; attempts already running when a task stops still count.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from caliper.errors import UsageError
from caliper.results.models import AttemptRecord, Outcome
from caliper.results.sequential import (
    DEFAULT_MARGIN,
    SequentialDesign,
    confidence_sequence,
    design,
)
from caliper.system import attrs_classes

SPRT_METHOD = "truncated sequential probability ratio test (exact boundaries)"
"""``meta.adaptive.method`` of runs that stopped with :func:`design`."""


@attrs_classes.frozen
class AdaptiveSettings:
    """The ``--k auto`` flags: bounds on k, the bars, the precision and the confidence."""

    max_k: int
    min_k: int = 1
    precision: float | None = None
    confidence: float = 0.95
    run_bar: float | None = None
    task_bars: dict[str, float] = attrs.field(factory=dict)
    margin: float = DEFAULT_MARGIN
    family: int = 1
    settle: bool = True
    timeouts: str = "failure"
    """The run's ``--timeouts`` policy: whether a timed-out attempt counts as a failed one."""

    def bar(self, task_name: str) -> float | None:
        """The bar ``task_name`` is decided against (its own, else the run-wide one)."""
        return self.task_bars.get(task_name, self.run_bar)

    def design(self, bar: float) -> SequentialDesign:
        """The stopping boundaries for ``bar``: wrong "met" at ``α``, wrong "failed" at
        ``α`` shared (Bonferroni) among the gate's ``family`` bars."""
        alpha = 1.0 - self.confidence
        return design(bar, self.margin, self.max_k, self.min_k, alpha, alpha / max(self.family, 1))

    def to_data(self) -> dict[str, Any]:
        """As saved in ``meta.adaptive``."""
        return {
            "method": SPRT_METHOD,
            "max_k": self.max_k,
            "min_k": self.min_k,
            "precision": self.precision,
            "confidence": self.confidence,
            "run_bar": self.run_bar,
            "task_bars": dict(self.task_bars),
            "margin": self.margin,
            "family": self.family,
        }


def check_bar_tasks(settings: AdaptiveSettings, task_names: Sequence[str]) -> None:
    """A ``--min-score TASK=x`` must name a task of the spec (exit 2 with a did-you-mean)."""
    for name in settings.task_bars:
        if name in task_names:
            continue
        close = difflib.get_close_matches(name, list(task_names), n=1)
        raise UsageError(
            f"--min-score {name}=…: the spec has no task named {name!r}."
            + (f" Did you mean {close[0]!r}?" if close else ""),
            hint=f"Tasks: {', '.join(task_names)}.",
        )


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def stop_reason(
    settings: AdaptiveSettings, bar: float | None, successes: int, usable: int
) -> str | None:
    """Why a task with ``successes`` passes in ``usable`` usable attempts may stop, or
    ``None`` when it must go on (the ``--max-k`` limit is the caller's)."""
    if usable < max(settings.min_k, 1):
        return None
    level = f"{settings.confidence * 100:g}%"
    if bar is not None:
        reason = _bar_reason(settings, bar, successes, usable, level)
        if reason is not None:
            return reason
    if settings.precision is not None:
        interval = confidence_sequence(successes, usable, settings.confidence)
        if interval.width < settings.precision:
            span = f"[{_pct(interval.low)}–{_pct(interval.high)}]"
            return (
                f"precise enough: the anytime-valid {level} interval {span} is narrower than "
                f"{_pct(settings.precision)}"
            )
    return None


def _bar_reason(
    settings: AdaptiveSettings, bar: float, successes: int, usable: int, level: str
) -> str | None:
    if bar <= 0.0:
        return f"bar {_pct(bar)} met: every rate is at or above it"
    found = settings.design(bar)
    decision = found.decide(successes, usable)
    if decision is not None:
        side = "above" if decision == "met" else "below"
        return (
            f"bar {_pct(bar)} {decision}: {successes}/{usable} passed, {side} it at {level} by "
            f"the sequential test (margin {_pct(found.margin)})"
        )
    if usable >= settings.max_k or found.can_meet(successes, usable):
        return None
    if settings.precision is not None:
        return None  # the task still runs towards its precision
    if settings.settle or not found.can_fail(successes, usable):
        if not found.can_meet(0, 0):
            return (
                f"bar {_pct(bar)} cannot be met within --max-k {settings.max_k} even if every "
                "attempt passes: inconclusive (raise --max-k)"
            )
        return (
            f"bar {_pct(bar)} can no longer be met within --max-k {settings.max_k} "
            f"({successes}/{usable} passed): inconclusive"
        )
    return None


@attrs_classes.define
class _TaskState:
    scheduled: int = 0
    finished: int = 0
    successes: int = 0
    usable: int = 0
    reason: str | None = None


class AdaptiveK:
    """Per-task bookkeeping of an adaptive run (thread-safe)."""

    def __init__(self, settings: AdaptiveSettings, task_names: Sequence[str]):
        self.settings = settings
        self._tasks = {name: _TaskState() for name in task_names}
        self._lock = threading.Lock()

    def observe(self, record: AttemptRecord) -> None:
        """Count a finished attempt and decide whether its task is done."""
        with self._lock:
            state = self._tasks.get(record.task_name)
            if state is None:
                return
            state.finished += 1
            if record.outcome.scored(self.settings.timeouts):
                state.usable += 1
                state.successes += record.outcome is Outcome.PASS
            if state.reason is None:
                state.reason = stop_reason(
                    self.settings,
                    self.settings.bar(record.task_name),
                    state.successes,
                    state.usable,
                )
            self._max_k_reached(record.task_name, state)

    def lost(self, task_name: str) -> None:
        """An attempt that ended without a record (stopped, skipped): it may be scheduled
        again only if the run goes on, so it just stops being in flight."""
        with self._lock:
            state = self._tasks.get(task_name)
            if state is not None:
                state.finished += 1
                self._max_k_reached(task_name, state)

    def _max_k_reached(self, task_name: str, state: _TaskState) -> None:
        if state.reason is None and state.finished >= self.settings.max_k:
            bar = self.settings.bar(task_name)
            interval = confidence_sequence(state.successes, state.usable, self.settings.confidence)
            span = f"[{_pct(interval.low)}–{_pct(interval.high)}]"
            what = f"bar {_pct(bar)} still undecided" if bar is not None else "not precise yet"
            state.reason = (
                f"--max-k {self.settings.max_k} reached ({what}; {state.successes}/"
                f"{state.usable} passed, anytime-valid interval {span})"
            )

    def next_jobs(self, free: int, blocked: Callable[[str], bool]) -> list[tuple[str, int]]:
        """Up to ``free`` more attempts, to the open tasks with the fewest scheduled so far."""
        jobs: list[tuple[str, int]] = []
        with self._lock:
            for _ in range(max(free, 0)):
                open_tasks = [
                    (state.scheduled, name)
                    for name, state in self._tasks.items()
                    if state.reason is None
                    and state.scheduled < self.settings.max_k
                    and not blocked(name)
                    and self._wanted(state)
                ]
                if not open_tasks:
                    break
                _, name = min(open_tasks)
                state = self._tasks[name]
                state.scheduled += 1
                jobs.append((name, state.scheduled))
        return jobs

    def _wanted(self, state: _TaskState) -> bool:
        """More attempts in flight than could still be needed are not started: once the
        ones running would reach ``--min-k``, wait for their results first."""
        in_flight = state.scheduled - state.finished
        return state.usable + in_flight < max(self.settings.min_k, 1) or in_flight == 0

    def reasons(self) -> dict[str, str]:
        """Why each task stopped (tasks that never got a reason are left out)."""
        with self._lock:
            return {name: s.reason for name, s in self._tasks.items() if s.reason is not None}
