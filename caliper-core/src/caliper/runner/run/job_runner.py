"""Running one :class:`~caliper.plugin.executor.AttemptJob` in this process (``RunWork.run_here``).

What the ``local`` executor's threads call: the job's prepared run and task are looked up by
engine key and name, the attempt pipeline (:func:`caliper.runner.attempt.pipeline.run_one_attempt`)
runs with automatic retries (:mod:`.retry`), and a fatal error asks the run to stop at once,
in the worker, so no further job starts before the scheduler has even seen it.

With ``prepare_ahead`` (the ``local`` executor's runs) each worker's next attempt sandbox is
made while its current agent runs (:mod:`.preparer`); :meth:`JobRunner.close` removes what
was made and never used.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from caliper.errors import CaliperError
from caliper.plugin.executor import AttemptJob, FinishedAttempt
from caliper.runner.attempt.pipeline import run_one_attempt
from caliper.runner.attempt.preparation import Preparer
from caliper.runner.attempt.retry import RetryPolicy, run_with_retries

if TYPE_CHECKING:
    from caliper.runner.attempt.judging import LazyEngine
    from caliper.runner.attempt.workdirs import WorkdirKeeper
    from caliper.runner.run.control import RunController
    from caliper.runner.run.prepare import PreparedRun
    from caliper.spec.model import Task


class JobRunner:
    """Runs attempt jobs of one run's prepared runs here (thread-safe; one per run)."""

    def __init__(
        self,
        runs: Mapping[str, PreparedRun],
        controller: RunController,
        judge_engines: Mapping[str, LazyEngine],
        keepers: Mapping[str, WorkdirKeeper | None] | None = None,
        *,
        prepare_ahead: int = 0,
    ) -> None:
        """``prepare_ahead``: how many workers get their next attempt made ahead (0: none)."""
        self.runs = runs
        self.controller = controller
        self.judge_engines = judge_engines
        self.keepers = keepers if keepers is not None else {}
        self._tasks: dict[str, dict[str, Task]] = {
            key: {task.name: task for task in run.spec.tasks} for key, run in runs.items()
        }
        self._preparer: Preparer | None = None
        if prepare_ahead > 0:
            self._preparer = Preparer(prepare_ahead, controller.stop_requested)

    def expect(self, jobs: int | None) -> None:
        """How many jobs the run will hand out (``None``: not known ahead, e.g. ``--k auto``):
        a worker's next attempt is made ahead only while some have not begun."""
        if self._preparer is not None:
            self._preparer.expect(jobs)

    def close(self) -> None:
        """Remove the attempt sandboxes made ahead and never used (once the run's attempts
        are all done; safe to call more than once)."""
        if self._preparer is not None:
            self._preparer.close()

    def __call__(self, job: AttemptJob) -> FinishedAttempt:
        """Run ``job`` with retries; never raises for agent, judge or sandbox trouble."""
        controller = self.controller
        if controller.stop_requested.is_set():
            return FinishedAttempt(job=job, record=None)
        prepared = self.runs[job.engine_key]
        task = self._tasks[job.engine_key][job.task_name]
        if self._preparer is not None:
            self._preparer.begun()
        try:
            finished = run_with_retries(
                lambda: run_one_attempt(
                    prepared,
                    task,
                    job,
                    controller,
                    self.judge_engines[job.engine_key],
                    prepared.forbidden,
                    self.keepers.get(job.engine_key),
                    self._preparer,
                ),
                RetryPolicy(retries=prepared.options.retries),
                controller.stop_requested,
            )
        except OSError as exc:  # e.g. the temp folder is full or not writable
            error = CaliperError(
                f"Could not prepare an attempt sandbox: {exc}",
                hint="Check free space and permissions of $CALIPER_TMPDIR (or the temp folder).",
            )
            finished = FinishedAttempt(job=job, record=None, fatal=error)
        if finished.fatal is not None:
            controller.request_stop(f"stopped: {finished.fatal.message}", kill=False)
        return finished
