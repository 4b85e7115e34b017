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

Each finished attempt is *settled* (the policy above takes it into account and the next
jobs are handed out) before it is *reported* (``events``: the journal line, the display).
Settling holds the scheduler's lock. With a session that accepts
:meth:`~caliper.plugin.executor.ExecutorSession.settle_where_finished` (the ``local``
executor) the worker thread that finished the attempt settles it, so it starts its next job
without waiting for this thread; otherwise this thread settles each attempt as the session
hands it back. Either way every decision that may withhold a job (``--fail-fast``, a stop,
``--max-cost``, ``--k auto``) is made, under the lock, before any later job is handed out,
so a withheld job never starts; and the reports come in the order the attempts were
settled.

Retries happen inside a job (:mod:`.job_runner`), so a retried attempt is one job. The cost
per finished attempt is O(1) in the number of jobs: waiting jobs sit in one queue per backend
and only queue heads are looked at.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from caliper.plugin.executor import AttemptJob, FinishedAttempt
from caliper.results.outcome import Outcome
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.errors import CaliperError
    from caliper.plugin.executor import ExecutorSession
    from caliper.results.models import AttemptRecord
    from caliper.runner.adaptive import AdaptiveK
    from caliper.runner.run.control import RunController
    from caliper.runner.run.prepare import PreparedRun

FAIL_FAST_OUTCOMES = (Outcome.INFRA_ERROR, Outcome.TIMEOUT)
POLL_SECONDS = 0.1


@attrs_classes.define
class Execution:
    """What the scheduler produced: the attempts finished and the tasks aborted per engine
    key, and why it stopped early (``fatal``, a signal). The finished attempts' records are
    not kept here (the journal has them), only their numbers."""

    attempts: dict[str, dict[str, list[int]]]
    """Engine key → task name → the numbers of the attempts finished with a record, sorted."""
    aborted: dict[str, set[str]]
    """Engine key → the tasks ``--fail-fast`` stopped."""
    fatal: CaliperError | None = None
    budget_stop: str | None = None
    """``--max-cost``: the sentence saying the budget was reached (``None``: it was not)."""
    spent: float | None = None
    """The cost the attempts reported, in USD (``None``: none reported one)."""
    interrupted: bool = False
    stop_reason: str | None = None
    stop_signal: int | None = None


@attrs_classes.frozen
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
    runs: Mapping[str, PreparedRun],
    session: ExecutorSession,
    jobs: Sequence[AttemptJob],
    *,
    controller: RunController,
    workers: int,
    events: Events | None = None,
    adaptive: Mapping[str, AdaptiveK] | None = None,
    budget: float | None = None,
) -> Execution:
    """Run ``jobs`` of the prepared ``runs`` (by engine key; and, for an engine key in
    ``adaptive``, what its ``--k auto`` hands out) through ``session``, at most ``workers``
    at once; ``events`` hears of each finished attempt, ``controller`` says when to stop. The
    caller starts and closes the session. ``budget`` (``--max-cost``, USD): once the finished
    attempts' reported cost reaches it, no further attempt is started."""
    scheduler = _Scheduler(runs, session, jobs, controller, workers, adaptive or {})
    scheduler.budget = budget
    return scheduler.run(events or Events())


class _Scheduler:
    """One run's scheduling state (see :func:`schedule`). Its state changes only under
    ``lock`` (settling and handing out, from this thread or a worker's); the reports and the
    loop run on the thread that called :func:`schedule`."""

    def __init__(
        self,
        runs: Mapping[str, PreparedRun],
        session: ExecutorSession,
        jobs: Sequence[AttemptJob],
        controller: RunController,
        workers: int,
        adaptive: Mapping[str, AdaptiveK],
    ) -> None:
        """Queue the ``jobs`` that name a task of their engine's spec."""
        self.session = session
        self.controller = controller
        self.adaptive = adaptive
        self.workers = max(1, workers)
        self.fail_fast = FailFast({key: run.options.fail_fast for key, run in runs.items()})
        self.k_of = {key: run.options.k for key, run in runs.items()}
        self.backend_of = {key: run.engine.backend_id for key, run in runs.items()}
        self.execution = Execution(
            attempts={key: {task.name: [] for task in run.spec.tasks} for key, run in runs.items()},
            aborted={key: set() for key in runs},
        )
        self.budget: float | None = None
        self.lock = threading.RLock()
        self.unsettled = 0
        """Jobs handed out and not settled yet."""
        tasks = self.execution.attempts
        self.waiting = _Waiting([job for job in jobs if job.task_name in tasks[job.engine_key]])

    def hand_out(self) -> None:
        """Submit waiting jobs while the session has room (heads of queues only); under
        ``lock``."""
        if self.controller.stop_requested.is_set():
            return
        for queue in self.waiting.queues.values():
            while queue:
                job = queue[0]
                if self.fail_fast.stopped(job.engine_key, job.task_name):
                    queue.popleft()
                    self.execution.aborted[job.engine_key].add(job.task_name)
                    continue
                if not self.session.has_room(job):
                    break
                queue.popleft()
                self.session.submit(job)
                self.unsettled += 1

    def refill(self) -> None:
        """``--k auto``: ask each adaptive engine for work for the free workers; under
        ``lock``."""
        if not self.adaptive or self.controller.stop_requested.is_set():
            return
        for key, state in self.adaptive.items():
            # asked even with no worker free: a baseline arm hands out the attempt it owes
            # the other arm's pair then (it waits in the queue for room)
            free = max(self.workers - self.unsettled, 0)
            for name, number in state.next_jobs(
                free, lambda name, key=key: self.fail_fast.stopped(key, name)
            ):
                self.waiting.add(AttemptJob(name, number, key, self.backend_of[key]))
            self.hand_out()

    def settle(self, finished: FinishedAttempt) -> None:
        """Take ``finished`` into account, then hand out the next jobs (under ``lock``, in
        whichever thread settles it): what decides which jobs may go (``--fail-fast``,
        ``--k auto``, ``--max-cost``, a fatal error) is seen first."""
        job, record, execution = finished.job, finished.record, self.execution
        self.unsettled -= 1
        state = self.adaptive.get(job.engine_key)
        if state is not None:
            if record is not None:
                state.observe(record)
            else:
                state.lost(job.task_name)
        if finished.fatal is not None:
            self.controller.request_stop(f"stopped: {finished.fatal.message}", kill=False)
            if execution.fatal is None:
                execution.fatal = finished.fatal
        if record is not None:
            execution.attempts[job.engine_key][job.task_name].append(record.attempt)
            self._count_cost(record)
            if self.fail_fast.observe(job.engine_key, record):
                finished.tripped_fail_fast = job.number < self.k_of[job.engine_key]
                if finished.tripped_fail_fast:
                    execution.aborted[job.engine_key].add(job.task_name)
        if not self.controller.killed:
            self.hand_out()
            self.refill()

    @staticmethod
    def report(finished: FinishedAttempt, events: Events) -> None:
        """Tell ``events`` of a settled attempt (the journal line, the display update)."""
        if finished.record is None:
            return
        events.attempt_done(finished)
        if finished.tripped_fail_fast:
            events.task_aborted(finished)

    def _count_cost(self, record: AttemptRecord) -> None:
        """Add ``record``'s reported cost (every try's) to the run's; at ``--max-cost`` stop
        starting attempts (those running finish and are kept)."""
        execution = self.execution
        costs = [t.usage.cost_usd for t in record.tries if t.usage is not None]
        costs.append(record.usage.cost_usd if record.usage is not None else None)
        known = [cost for cost in costs if cost is not None]
        if not known:
            return
        execution.spent = (execution.spent or 0.0) + sum(known)
        if self.budget is None or execution.budget_stop is not None:
            return
        if execution.spent >= self.budget:
            execution.budget_stop = (
                f"the --max-cost budget of ${self.budget:.2f} was reached "
                f"(${execution.spent:.2f} reported by the attempts so far)"
            )
            self.controller.request_stop(f"stopped: {execution.budget_stop}", kill=False)

    def run(self, events: Events) -> Execution:
        """Hand out, then report finished attempts (settling them here unless the session
        settles them where they finished) until none is in flight; on a kill cancel the
        session (once) and let the cleanups run."""
        controller, session = self.controller, self.session
        cancelled = False
        settled_there = session.settle_where_finished(self.settle, self.lock)
        with self.lock:
            self.hand_out()
            self.refill()
        events.started()
        while session.in_flight():
            finished = session.next_finished(POLL_SECONDS)
            if finished is not None:
                if not settled_there:
                    with self.lock:
                        self.settle(finished)
                self.report(finished, events)
            if controller.killed:
                if not cancelled:
                    session.cancel()
                    cancelled = True
                controller.drain()
        execution = self.execution
        for by_task in execution.attempts.values():
            for numbers in by_task.values():
                numbers.sort()
        execution.interrupted = controller.killed
        execution.stop_reason = controller.stop_reason
        execution.stop_signal = controller.stop_signal
        return execution
