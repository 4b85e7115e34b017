"""The ``inline`` executor (test-only): a second implementation of the executor contract.

It runs one job at a time in the scheduler's own thread, inside ``next_finished``, and
writes a line per job to the file its ``--inline-log PATH`` setting names, so a test can see
that ``caliper run --executor inline`` went through a plugin executor and that the
executor's own flag reached it.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import caliper
from caliper.plugin.executor import (
    AttemptJob,
    Executor,
    ExecutorOption,
    ExecutorSession,
    FinishedAttempt,
    RunWork,
)


class InlineSession(ExecutorSession):
    """Jobs run one by one when the scheduler asks for the next finished attempt."""

    def __init__(self, work: RunWork, log: Path | None) -> None:
        self._work = work
        self._log = log
        self._queue: collections.deque[AttemptJob] = collections.deque()
        self._cancelled = False
        self.closed = False

    def has_room(self, job: AttemptJob) -> bool:
        """One job at a time."""
        return not self._queue

    def submit(self, job: AttemptJob) -> None:
        """Keep ``job`` for the next :meth:`next_finished`."""
        self._queue.append(job)

    def next_finished(self, timeout: float) -> FinishedAttempt | None:
        """Run the waiting job here and hand it back."""
        if not self._queue:
            return None
        job = self._queue.popleft()
        if self._cancelled:  # handed back once, without a record
            return FinishedAttempt(job=job, record=None)
        finished = self._work.run_here(job)
        if self._log is not None:
            with self._log.open("a", encoding="utf-8") as out:
                out.write(f"{job.engine_key}|{job.backend_id}|{job.task_name}#{job.number}\n")
        finished.node = "inline"
        return finished

    def in_flight(self) -> int:
        """The waiting job, if any."""
        return len(self._queue)

    def cancel(self) -> None:
        """The waiting job will be handed back without running."""
        self._cancelled = True

    def close(self) -> None:
        """Nothing to release."""
        self.closed = True


class InlineExecutor(Executor):
    """Runs attempts in the scheduler's thread, one at a time (for tests of the seam)."""

    id = "inline"
    description = "test-only: attempts one at a time in the scheduler's thread"
    options = (ExecutorOption("log", "Append one line per finished job to this file."),)

    def start(self, work: RunWork, settings: Mapping[str, str]) -> ExecutorSession:
        """A session; ``settings['log']`` names the job log, when given."""
        log = settings.get("log")
        return InlineSession(work, Path(log) if log else None)


@caliper.hookimpl
def register_executors(register: Any) -> None:
    """Register the ``inline`` executor."""
    register(InlineExecutor())
