"""The built-in ``local`` executor: attempts on a pool of ``--workers`` threads in this process.

Each submitted job runs :attr:`caliper.plugin.executor.RunWork.run_here` on a worker thread
(sandbox, agent, checks, retries, redaction); that thread then settles the finished attempt
(the scheduler's policy, which may submit the next job, so the same thread starts it next)
and puts it on a queue, so :meth:`LocalSession.next_finished` costs O(1) per attempt however
many are in flight (``concurrent.futures.wait`` over every pending future would make a run
quadratic).

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
import threading
from collections.abc import Callable, Mapping
from typing import Any

import caliper
from caliper.plugin.executor import AttemptJob, Executor, ExecutorSession, FinishedAttempt, RunWork


class LocalSession(ExecutorSession):
    """One run on the thread pool.

    It accepts :meth:`settle_where_finished`: the worker thread that finished a job settles
    it (the scheduler's policy, which may submit the next job) before it goes back to the
    pool, so with the next job already in the pool's queue that same thread starts it at
    once. The scheduler's lock guards the session's counts; without a settle a lock of its
    own does.
    """

    def __init__(self, work: RunWork) -> None:
        self._work = work
        self._workers = max(1, work.workers)
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=self._workers, thread_name_prefix="caliper-attempt"
        )
        # queue.Queue, not SimpleQueue: on CPython 3.11 a signal arriving while the main
        # thread waits in SimpleQueue.get(timeout=…) can leave that wait hung past its
        # timeout, so a Ctrl-C stalled the run until an attempt happened to finish
        self._done: queue.Queue[tuple[FinishedAttempt, BaseException | None]] = queue.Queue()
        self._lock: threading.RLock = threading.RLock()
        self._settle: Callable[[FinishedAttempt], None] | None = None
        self._running = 0
        """Jobs submitted and not yet finished (what :meth:`has_room` counts)."""
        self._by_backend: dict[str, int] = {}
        self._unreturned = 0
        """Jobs submitted and not yet handed back by :meth:`next_finished`."""
        self._futures: dict[int, concurrent.futures.Future[None]] = {}
        self._tokens = iter(range(1 << 62))
        self._closed = False

    def settle_where_finished(
        self, settle: Callable[[FinishedAttempt], None], lock: threading.RLock
    ) -> bool:
        """Accept: each finished job is settled on its worker thread, under ``lock``."""
        self._settle, self._lock = settle, lock
        return True

    def has_room(self, job: AttemptJob) -> bool:
        """Room for ``job``: fewer than ``--workers`` running, and its backend under its
        ``--max-concurrent`` limit (no limit when none is set)."""
        with self._lock:
            if self._running >= self._workers:
                return False
            limit = self._work.max_concurrent.get(job.backend_id)
            return limit is None or self._by_backend.get(job.backend_id, 0) < limit

    def submit(self, job: AttemptJob) -> None:
        """Queue ``job`` on the pool (never blocks); refused once the session is closing."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the local executor session is closed")
            token = next(self._tokens)
            future = self._pool.submit(self._run, token, job)
            self._running += 1
            self._unreturned += 1
            self._by_backend[job.backend_id] = self._by_backend.get(job.backend_id, 0) + 1
            self._futures[token] = future
        # a job cancelled before it started is handed back from here (a started one hands
        # itself back from _run), so every job is handed back exactly once
        future.add_done_callback(
            lambda done: self._hand_back(token, job, None, None) if done.cancelled() else None
        )

    def _run(self, token: int, job: AttemptJob) -> None:
        """On a worker thread: run ``job``, then hand it back (settled, when settling here)."""
        try:
            finished = self._work.run_here(job)
        except BaseException as exc:  # run_here never raises; a bug surfaces in next_finished
            self._hand_back(token, job, None, exc)
            return
        self._hand_back(token, job, finished, None)

    def _hand_back(
        self,
        token: int,
        job: AttemptJob,
        finished: FinishedAttempt | None,
        error: BaseException | None,
    ) -> None:
        """Count ``job`` out, settle it (when settling here), queue it for next_finished."""
        if finished is None:
            finished = FinishedAttempt(job=job, record=None)
        with self._lock:
            self._running -= 1
            self._by_backend[job.backend_id] -= 1
            self._futures.pop(token, None)
            if error is None and self._settle is not None:
                try:
                    self._settle(finished)
                except BaseException as exc:  # surfaces in next_finished, on the scheduler
                    error = exc
            self._done.put((finished, error))

    def next_finished(self, timeout: float) -> FinishedAttempt | None:
        """The next job the pool finished (or cancelled), waiting at most ``timeout``."""
        try:
            finished, error = self._done.get(timeout=timeout)
        except queue.Empty:
            return None
        with self._lock:
            self._unreturned -= 1
        if error is not None:
            raise error
        return finished

    def in_flight(self) -> int:
        """Jobs submitted and not yet handed back by :meth:`next_finished`."""
        return self._unreturned

    def cancel(self) -> None:
        """Drop the jobs that have not started; running ones stop through the run's
        controller (which ended their processes) and are handed back as they return."""
        with self._lock:
            futures = list(self._futures.values())
        for future in futures:
            future.cancel()

    def close(self) -> None:
        """Wait for the worker threads to finish and release them.

        Submitting stops first, under the lock: the pool's shutdown cancels queued jobs
        holding its own lock, and their hand-back takes ours, so no worker may be waiting
        inside ours to submit to the pool then."""
        with self._lock:
            self._closed = True
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
