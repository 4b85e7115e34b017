"""Start-up tuning of a run: what waits until the first agents are out, and what is imported
while they run.

A run's first attempts should start as soon as possible; what the run needs only later (its
journals, the live display, the modules that judge and assemble the results) is done once
the first jobs are handed out. Two pieces make that work:

* :class:`FirstStarts` waits, briefly and once, for the first jobs to start a process in
  this process's worker threads (their sandboxes are being made there) before the
  orchestrator takes the interpreter for the rest;
* :func:`import_end_of_run` imports what a run needs only when its first attempt ends
  (:data:`END_OF_RUN_MODULES`, the results codec), while the first agents run instead.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from caliper.system import process

if TYPE_CHECKING:
    from caliper.plugin.executor import AttemptJob, FinishedAttempt


class FirstStarts:
    """Waiting, once, for the first jobs handed out to start a process (their agent, or a
    setup command) or to end without one, as this process sees them (``run_process``'s
    count of starts; the jobs' ends through :meth:`counting`). Jobs another executor runs
    elsewhere do neither here: the wait then ends after :attr:`LONGEST` seconds."""

    LONGEST = 0.25
    """Seconds waited at most (making an attempt's sandbox takes ~0.05 s of CPU)."""
    POLL = 0.002

    def __init__(self) -> None:
        """Count from the process starts made so far."""
        self._starts_before = process.starts_so_far()
        self._ended: list[AttemptJob] = []

    def counting(
        self, run_here: Callable[[AttemptJob], FinishedAttempt]
    ) -> Callable[[AttemptJob], FinishedAttempt]:
        """``run_here``, counting the jobs it has run."""

        def run_and_count(job: AttemptJob) -> FinishedAttempt:
            try:
                return run_here(job)
            finally:
                self._ended.append(job)  # list.append is atomic: no lock needed

        return run_and_count

    def wait(self, jobs: int) -> None:
        """Return once ``jobs`` jobs have started a process or ended (or after
        :attr:`LONGEST` seconds), sleeping meanwhile so the workers have the interpreter."""
        deadline = time.monotonic() + self.LONGEST
        while (
            process.starts_so_far() - self._starts_before + len(self._ended) < jobs
            and time.monotonic() < deadline
        ):
            time.sleep(self.POLL)


END_OF_RUN_MODULES = (
    "caliper.runner.attempt.judge_calls",
    "caliper.plugin.tools",  # the judges' context names the backend's tools
    "caliper.results.run_summary",  # written beside the results file
)
"""Modules a run imports only once its first attempt ends (judging it, saving the results),
imported while the first agents run instead (the journal and the results store are imported
by then)."""


def import_end_of_run() -> None:
    """Import :data:`END_OF_RUN_MODULES` and have the results codec ready to decode the run
    (what the results file is assembled with at the end)."""
    from caliper.results import codec

    for name in END_OF_RUN_MODULES:
        importlib.import_module(name)
    codec.prepare_structuring()
