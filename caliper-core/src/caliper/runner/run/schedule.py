"""Scheduling attempts: which job runs next, through an executor session.

The scheduler owns the run's policy; the executor (:mod:`caliper.plugin.executor`) only says whether
there is room and hands finished attempts back. Policy, all decided here in the calling
thread:

* jobs go out in plan order (task by task), as the session has room — per backend, so a
  backend at its ``--max-concurrent`` limit does not hold back another backend's jobs;
* ``--fail-fast N`` counts consecutive ``infra_error``/``timeout`` outcomes of a task (per
  engine); at N the task's jobs not yet handed out are skipped and the task is aborted;
* ``--k auto`` (:mod:`.adaptive`) hands out more jobs as attempts finish;
* a fatal error (the CLI cannot work at all, the judge engine is unusable) or a stop signal
  (Ctrl-C, SIGTERM, SIGHUP) stops handing out jobs; on a kill the session is cancelled and
  the controller lets the cleanups run. Whatever finished is kept.

Retries happen inside a job (:mod:`.job_runner`), so a retried attempt is one job. The cost
per finished attempt is O(1) in the number of jobs: waiting jobs sit in one queue per backend
and only queue heads are looked at.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

from caliper.plugin.executor import AttemptJob, FinishedAttempt
from caliper.results.models import AttemptRecord, Outcome

if TYPE_CHECKING:
    from caliper.errors import CaliperError
    from caliper.plugin.executor import ExecutorSession, RunWork
    from caliper.runner.adaptive import AdaptiveK

FAIL_FAST_OUTCOMES = (Outcome.INFRA_ERROR, Outcome.TIMEOUT)
POLL_SECONDS = 0.1


@attrs.define
class Execution:
    """What the scheduler produced: records and aborted tasks per engine key, and why it
    stopped early (``fatal``, a signal)."""

    records: dict[str, dict[str, list[AttemptRecord]]]
    """Engine key → task name → records, sorted by attempt number."""
    aborted: dict[str, set[str]]
    """Engine key → the tasks ``--fail-fast`` stopped."""
    fatal: CaliperError | None = None
    interrupted: bool = False
    stop_reason: str | None = None
    stop_signal: int | None = None


@attrs.frozen
class Events:
    """Where the scheduler reports, in its own thread, as things happen.

    ``started`` is called once, right after the first jobs are handed out and before any
    finished attempt is looked at (what the run needs only from then on is set up there, while
    the first agents start); ``attempt_done`` gets each finished attempt that has a record, as
    soon as it is handed back (the journal appends it there); ``task_aborted`` the finished
    attempt that made its task stop under ``--fail-fast``.
    """

    attempt_done: Callable[[FinishedAttempt], None] = lambda _finished: None
    task_aborted: Callable[[FinishedAttempt], None] = lambda _finished: None
    started: Callable[[], None] = lambda: None


class FailFast:
    """Consecutive infra_error/timeout outcomes per (engine key, task), in the order the
    scheduler receives them; each engine's limit is its run's ``--fail-fast``."""

    def __init__(self, limits: Mapping[str, int]):
        self.limits = limits
        self._streak: dict[tuple[str, str], int] = {}
        self.tripped: set[tuple[str, str]] = set()

    def observe(self, engine_key: str, record: AttemptRecord) -> bool:
        """Count ``record``; true when this record made its task trip."""
        key = (engine_key, record.task_name)
        if record.outcome in FAIL_FAST_OUTCOMES:
            self._streak[key] = self._streak.get(key, 0) + 1
        else:
            self._streak[key] = 0
        limit = self.limits.get(engine_key, 0)
        if limit > 0 and key not in self.tripped and self._streak[key] >= limit:
            self.tripped.add(key)
            return True
        return False

    def stopped(self, engine_key: str, task_name: str) -> bool:
        """Whether ``--fail-fast`` stopped this task of this engine."""
        return (engine_key, task_name) in self.tripped


class _Waiting:
    """Jobs not handed out yet, one FIFO per backend (plan order within each)."""

    def __init__(self, jobs: Sequence[AttemptJob]):
        self.queues: dict[str, collections.deque[AttemptJob]] = {}
        for job in jobs:
            self.add(job)

    def add(self, job: AttemptJob) -> None:
        self.queues.setdefault(job.backend_id, collections.deque()).append(job)


def schedule(
    work: RunWork,
    session: ExecutorSession,
    jobs: Sequence[AttemptJob],
    *,
    events: Events | None = None,
    adaptive: Mapping[str, AdaptiveK] | None = None,
) -> Execution:
    """Run ``jobs`` (and, for an engine key in ``adaptive``, what its ``--k auto`` hands out)
    through ``session``; ``events`` hears of each finished attempt. The caller starts and
    closes the session."""
    controller = work.controller
    events = events or Events()
    adaptive = adaptive or {}
    fail_fast = FailFast({key: run.options.fail_fast for key, run in work.runs.items()})
    k_of = {key: run.options.k for key, run in work.runs.items()}
    backend_of = {key: run.engine.backend_id for key, run in work.runs.items()}
    execution = Execution(
        records={key: {task.name: [] for task in run.spec.tasks} for key, run in work.runs.items()},
        aborted={key: set() for key in work.runs},
    )
    waiting = _Waiting([job for job in jobs if job.task_name in execution.records[job.engine_key]])
    workers = max(1, work.workers)

    def hand_out() -> None:
        """Submit waiting jobs while the session has room (heads of queues only)."""
        if controller.stop_requested.is_set():
            return
        for queue in waiting.queues.values():
            while queue:
                job = queue[0]
                if fail_fast.stopped(job.engine_key, job.task_name):
                    queue.popleft()
                    execution.aborted[job.engine_key].add(job.task_name)
                    continue
                if not session.has_room(job):
                    break
                queue.popleft()
                session.submit(job)

    def refill() -> None:
        """``--k auto``: ask each adaptive engine for work for the free workers."""
        if not adaptive or controller.stop_requested.is_set():
            return
        for key, state in adaptive.items():
            free = workers - session.in_flight()
            if free <= 0:
                break
            for name, number in state.next_jobs(
                free, lambda name, key=key: fail_fast.stopped(key, name)
            ):
                waiting.add(AttemptJob(name, number, key, backend_of[key]))
            hand_out()

    def handle(finished: FinishedAttempt) -> None:
        """Take ``finished`` into account, hand out the next jobs, then tell ``events``.

        The next jobs go out before the journal line and the display update, so a free
        worker starts its next attempt without waiting for them; what decides
        which jobs may go (``--fail-fast``, ``--k auto``, a fatal error) is seen first.
        """
        job = finished.job
        record = finished.record
        state = adaptive.get(job.engine_key)
        if state is not None:
            if record is not None:
                state.observe(record)
            else:
                state.lost(job.task_name)
        if finished.fatal is not None:
            controller.request_stop(f"stopped: {finished.fatal.message}", kill=False)
            if execution.fatal is None:
                execution.fatal = finished.fatal
        if record is not None:
            execution.records[job.engine_key][job.task_name].append(record)
            if fail_fast.observe(job.engine_key, record):
                finished.tripped_fail_fast = job.number < k_of[job.engine_key]
        if not controller.killed:
            hand_out()
            refill()
        if record is None:
            return
        events.attempt_done(finished)
        if finished.tripped_fail_fast:
            execution.aborted[job.engine_key].add(job.task_name)
            events.task_aborted(finished)

    cancelled = False
    hand_out()
    refill()
    events.started()
    while session.in_flight():
        finished = session.next_finished(POLL_SECONDS)
        if finished is not None:
            handle(finished)
        if controller.killed:
            if not cancelled:
                session.cancel()
                cancelled = True
            controller.drain()
    for by_task in execution.records.values():
        for records in by_task.values():
            records.sort(key=lambda r: r.attempt)
    execution.interrupted = controller.killed
    execution.stop_reason = controller.stop_reason
    execution.stop_signal = controller.stop_signal
    return execution
