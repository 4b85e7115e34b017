"""The built-in ``local`` executor: attempts on a pool of ``--workers`` threads in this process.

Each submitted job runs :attr:`caliper.plugin.executor.RunWork.run_here` on a worker thread
(sandbox,
agent, checks, retries, redaction); the finished attempt puts itself on a queue the moment it
is done, so :meth:`LocalSession.next_finished` costs O(1) per attempt however many are in
flight (``concurrent.futures.wait`` over every pending future would make a run quadratic).

Capacity is counted here: at most ``--workers`` jobs in flight in total and at most
``--max-concurrent BACKEND=N`` of one backend. The scheduler submits a job only when
:meth:`LocalSession.has_room` says so, so the pool never holds a backlog a stop would have to
drain.

It is registered as a plugin like any other (entry point ``local`` in ``caliper.executors``),
and the runner falls back to it directly when the entry point is filtered out
(``CALIPER_LOAD_PLUGINS``) or not loaded at all (``caliper.run(..., plugins=...)``), so
``local`` is always available.
"""

from __future__ import annotations

import concurrent.futures
import queue
from collections.abc import Mapping
from typing import Any

import caliper
from caliper.plugin.executor import AttemptJob, Executor, ExecutorSession, FinishedAttempt, RunWork


class LocalSession(ExecutorSession):
    """One run on the thread pool; every method is called from the scheduler's thread."""

    def __init__(self, work: RunWork) -> None:
        self._work = work
        self._workers = max(1, work.workers)
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=self._workers, thread_name_prefix="caliper-attempt"
        )
        # queue.Queue, not SimpleQueue: on CPython 3.11 a signal arriving while the main
        # thread waits in SimpleQueue.get(timeout=…) can leave that wait hung past its
        # timeout, so a Ctrl-C stalled the run until an attempt happened to finish
        self._done: queue.Queue[
            tuple[int, AttemptJob, concurrent.futures.Future[FinishedAttempt]]
        ] = queue.Queue()
        self._in_flight = 0
        self._by_backend: dict[str, int] = {}
        self._futures: dict[int, concurrent.futures.Future[FinishedAttempt]] = {}
        self._tokens = iter(range(1 << 62))

    def has_room(self, job: AttemptJob) -> bool:
        """Room for ``job``: fewer than ``--workers`` in flight, and its backend under its
        ``--max-concurrent`` limit (no limit when none is set)."""
        if self._in_flight >= self._workers:
            return False
        limit = self._work.max_concurrent.get(job.backend_id)
        return limit is None or self._by_backend.get(job.backend_id, 0) < limit

    def submit(self, job: AttemptJob) -> None:
        """Queue ``job`` on the pool (never blocks)."""
        future = self._pool.submit(self._work.run_here, job)
        self._in_flight += 1
        self._by_backend[job.backend_id] = self._by_backend.get(job.backend_id, 0) + 1
        token = next(self._tokens)
        self._futures[token] = future
        # a cancelled future calls back too, so every job is handed back exactly once
        future.add_done_callback(lambda done: self._done.put((token, job, done)))

    def next_finished(self, timeout: float) -> FinishedAttempt | None:
        """The next job the pool finished (or cancelled), waiting at most ``timeout``."""
        try:
            token, job, future = self._done.get(timeout=timeout)
        except queue.Empty:
            return None
        self._in_flight -= 1
        self._by_backend[job.backend_id] -= 1
        self._futures.pop(token, None)
        if future.cancelled():
            return FinishedAttempt(job=job, record=None)
        return future.result()  # run_here never raises; a bug there surfaces here

    def in_flight(self) -> int:
        """Jobs submitted and not yet handed back."""
        return self._in_flight

    def cancel(self) -> None:
        """Drop the jobs that have not started; running ones stop through the run's
        controller (which ended their processes) and are handed back as they return."""
        for future in list(self._futures.values()):
            future.cancel()

    def close(self) -> None:
        """Wait for the worker threads to finish and release them."""
        self._pool.shutdown(wait=True, cancel_futures=True)


class LocalExecutor(Executor):
    """Runs attempts on ``--workers`` threads of this process (the default executor)."""

    id = "local"
    description = "attempts on a pool of --workers threads in this process (the default)"

    def start(self, work: RunWork, settings: Mapping[str, str]) -> ExecutorSession:
        """A thread pool for ``work``; the local executor takes no settings."""
        return LocalSession(work)


@caliper.hookimpl
def register_executors(register: Any) -> None:
    """Register the ``local`` executor."""
    register(LocalExecutor())
