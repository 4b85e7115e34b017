"""Scheduling attempts: a pool of ``--workers`` threads, one job per attempt.

Jobs are queued task by task, so ``--fail-fast`` can stop a task's remaining attempts after
N consecutive unusable ones. A fatal error (the CLI cannot work at all, the judge engine is
unusable) or a stop signal (Ctrl-C, SIGTERM, SIGHUP) stops scheduling; whatever finished
is kept.
"""

from __future__ import annotations

import concurrent.futures
import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from caliper.errors import CaliperError
from caliper.results.models import AttemptRecord, Outcome
from caliper.runner.attempt import AttemptReport, run_one_attempt
from caliper.runner.control import RunController
from caliper.runner.judging import LazyEngine

if TYPE_CHECKING:
    from caliper.runner.adaptive import AdaptiveK
    from caliper.runner.prepare import PreparedRun
    from caliper.runner.progress import Progress
    from caliper.runner.workdirs import WorkdirKeeper
    from caliper.spec.model import Task

FAIL_FAST_OUTCOMES = (Outcome.INFRA_ERROR, Outcome.TIMEOUT)
POLL_SECONDS = 0.1


@attrs.define
class Execution:
    """What the scheduler produced: records per task, aborted tasks, why it stopped early."""

    records: dict[str, list[AttemptRecord]]
    aborted: set[str]
    fatal: CaliperError | None = None
    interrupted: bool = False
    stop_reason: str | None = None
    stop_signal: int | None = None


class _FailFast:
    """Counts consecutive infra_error/timeout outcomes per task (in completion order)."""

    def __init__(self, limit: int):
        self.limit = limit
        self._streak: dict[str, int] = {}
        self.tripped: set[str] = set()
        self._lock = threading.Lock()

    def observe(self, record: AttemptRecord) -> bool:
        """Count ``record``; true when this record made its task trip."""
        with self._lock:
            if record.outcome in FAIL_FAST_OUTCOMES:
                self._streak[record.task_name] = self._streak.get(record.task_name, 0) + 1
            else:
                self._streak[record.task_name] = 0
            if (
                self.limit > 0
                and record.task_name not in self.tripped
                and self._streak[record.task_name] >= self.limit
            ):
                self.tripped.add(record.task_name)
                return True
            return False

    def stopped(self, task_name: str) -> bool:
        with self._lock:
            return task_name in self.tripped


@attrs.frozen
class Events:
    """Where the scheduler reports, in the main thread, as things happen.

    ``attempt_done`` gets each finished record as soon as it is recorded (the journal appends
    it there); ``task_aborted`` the name of a task ``--fail-fast`` stopped.
    """

    attempt_done: Callable[[AttemptRecord], None] = lambda _record: None
    task_aborted: Callable[[str], None] = lambda _name: None


def execute(
    prepared: PreparedRun,
    controller: RunController,
    progress: Progress,
    judge_engine: LazyEngine,
    jobs: list[tuple[str, int]] | None = None,
    events: Events | None = None,
    keeper: WorkdirKeeper | None = None,
    adaptive: AdaptiveK | None = None,
) -> Execution:
    """Run ``jobs`` (``(task name, attempt number)``; default: every task k times) on the
    worker pool and collect the records; ``events`` hears of each as it finishes."""
    from caliper.runner.retry import RetryPolicy, run_with_retries

    spec = prepared.spec
    options = prepared.options
    patterns = prepared.forbidden
    events = events or Events()
    policy = RetryPolicy(retries=options.retries)
    by_name = {task.name: task for task in spec.tasks}
    if jobs is None:
        jobs = [(task.name, n) for task in spec.tasks for n in range(1, options.k + 1)]
    fail_fast = _FailFast(options.fail_fast)
    refill: Callable[[int], list[tuple[Task, int]]] | None = None
    if adaptive is not None:  # --k auto: jobs are handed out as workers free up

        def refill(free: int) -> list[tuple[Task, int]]:
            if controller.stop_requested.is_set():
                return []
            return [(by_name[n], i) for n, i in adaptive.next_jobs(free, fail_fast.stopped)]

        jobs = []
    planned = [(by_name[name], n) for name, n in jobs if name in by_name]
    records: dict[str, list[AttemptRecord]] = {task.name: [] for task in spec.tasks}
    skipped: set[str] = set()
    skipped_lock = threading.Lock()
    execution = Execution(records=records, aborted=set())

    def job(task: Task, number: int) -> AttemptReport:
        if controller.stop_requested.is_set() or fail_fast.stopped(task.name):
            if fail_fast.stopped(task.name):
                with skipped_lock:
                    skipped.add(task.name)
            return AttemptReport(task=task, number=number, record=None)
        try:
            report = run_with_retries(
                lambda: run_one_attempt(
                    prepared, task, number, controller, judge_engine, patterns, keeper
                ),
                policy,
                controller.stop_requested,
            )
        except OSError as exc:  # e.g. the temp folder is full or not writable
            error = CaliperError(
                f"Could not prepare an attempt sandbox: {exc}",
                hint="Check free space and permissions of $CALIPER_TMPDIR (or the temp folder).",
            )
            return AttemptReport(task=task, number=number, record=None, fatal=error)
        # decided here, in the worker, so the next job of this worker already sees it
        if report.fatal is not None:
            controller.request_stop(f"stopped: {report.fatal.message}", kill=False)
        if report.record is not None and fail_fast.observe(report.record):
            report.tripped_fail_fast = number < options.k
        return report

    def handle(report: AttemptReport) -> None:
        if adaptive is not None:
            if report.record is not None:
                adaptive.observe(report.record)
            else:
                adaptive.lost(report.task.name)
        if report.record is not None:
            records[report.task.name].append(report.record)
            events.attempt_done(report.record)
            progress.attempt_done(report.record)
            if report.tripped_fail_fast:
                events.task_aborted(report.task.name)
                progress.task_aborted(report.task.name)
        if report.fatal is not None and execution.fatal is None:
            execution.fatal = report.fatal

    _run_pool(planned, options.workers, job, handle, controller, refill)
    for name in records:
        records[name].sort(key=lambda r: r.attempt)
    execution.aborted = skipped
    execution.interrupted = controller.killed
    execution.stop_reason = controller.stop_reason
    execution.stop_signal = controller.stop_signal
    return execution


def _run_pool(
    planned: list[tuple[Task, int]],
    workers: int,
    job: Callable[[Task, int], AttemptReport],
    handle: Callable[[AttemptReport], None],
    controller: RunController,
    refill: Callable[[int], list[tuple[Task, int]]] | None = None,
) -> None:
    """Run ``planned`` jobs (and what ``refill`` adds as workers free up) on a thread pool,
    handing each finished report to ``handle`` in the calling thread."""
    pool = concurrent.futures.ThreadPoolExecutor(
        max_workers=max(1, workers), thread_name_prefix="caliper-attempt"
    )
    # O(1) per finished attempt: each future puts itself on a queue when done, and the loop
    # takes them off one by one (``concurrent.futures.wait`` walks every pending future)
    finished: queue.SimpleQueue[concurrent.futures.Future[AttemptReport]] = queue.SimpleQueue()
    pending: set[concurrent.futures.Future[AttemptReport]] = set()
    cancelled = False

    def submit(items: list[tuple[Task, int]]) -> None:
        for task, n in items:
            future = pool.submit(job, task, n)
            pending.add(future)
            future.add_done_callback(finished.put)

    try:
        submit(planned)
        if refill is not None:
            submit(refill(workers))
        while pending:
            try:
                future = finished.get(timeout=POLL_SECONDS)
            except queue.Empty:
                future = None
            if future is not None:
                pending.discard(future)
                if not future.cancelled():
                    handle(future.result())
                if refill is not None and not controller.killed:
                    submit(refill(max(1, workers) - len(pending)))
            if controller.killed:
                if not cancelled:
                    for other in list(pending):
                        other.cancel()  # a cancelled future still calls back, so is counted
                    cancelled = True
                controller.drain()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
