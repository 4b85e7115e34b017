"""The runner: from a spec file to a saved run (``caliper run``).

``run_spec`` does the pre-flight checks (:mod:`.prepare`), schedules every attempt
(:mod:`.schedule`) through an executor (:mod:`caliper.executor`), each in its own sandbox
(:mod:`.attempt`), and saves the results.
See ``docs/architecture.md`` for which module owns each step.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from caliper.errors import CaliperError
from caliper.results.models import RunResults
from caliper.runner.options import RunOptions

if TYPE_CHECKING:
    from rich.console import Console

    from caliper.engine import Engine
    from caliper.executor import FinishedAttempt
    from caliper.plugins import PluginHost
    from caliper.runner.plan import Continuation, RunPlan
    from caliper.runner.prepare import PreparedRun
    from caliper.runner.progress import Progress

EXIT_OK = 0
EXIT_ALL_UNUSABLE = 1
EXIT_INTERRUPTED = 130
"""Ctrl-C; a run stopped by another signal exits 128 + its number (SIGTERM 143, SIGHUP 129)."""

__all__ = ["RunOptions", "RunReport", "run_spec"]


@attrs.frozen
class RunReport:
    """A finished (or stopped) run: its results, where they were saved and how to exit."""

    results: RunResults
    saved_to: Path | None
    fatal: CaliperError | None = None
    interrupted: bool = False
    save_error: CaliperError | None = None
    """Set when the store could not be written (its message says where the run went)."""
    stop_signal: int | None = None
    """The signal that stopped the run (``SIGINT``, ``SIGTERM``, ``SIGHUP``), if one did."""

    @property
    def exit_code(self) -> int:
        """0 usable results; 1 every scored attempt unusable; 128 + the signal number when a
        signal stopped it (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP); else fatal's own code."""
        if self.interrupted:
            return 128 + self.stop_signal if self.stop_signal else EXIT_INTERRUPTED
        if self.fatal is not None:
            return self.fatal.exit_code
        records = [a for task in self.results.tasks for a in task.attempts]
        if records and not any(
            r.outcome.usable or r.outcome.value == "not_checked" for r in records
        ):
            return EXIT_ALL_UNUSABLE
        return EXIT_OK


def _cli_version(prepared: PreparedRun) -> str | None:
    try:
        return prepared.engine.backend.cli_version(prepared.cli_path)
    except Exception:  # a version probe must never break a run
        return None


def run_spec(
    options: RunOptions,
    *,
    host: PluginHost | None = None,
    progress_console: Console | None = None,
    continuation: Continuation | None = None,
) -> RunReport:
    """Run ``options.spec_path`` and save the results; see :class:`RunReport` for exit codes.

    ``continuation`` resumes a saved run (same id, only its missing attempts) or retries one
    (a new run; see :mod:`.plan`). Every finished attempt goes to the run's journal at once
    (:mod:`caliper.results.journal`); the results file is assembled from it at the end.

    Raises :class:`CaliperError` subclasses for problems found before the first attempt.
    """
    from caliper import process
    from caliper.cli_versions import version_in_background
    from caliper.executor import AttemptJob, RunWork
    from caliper.plugins import PluginHost
    from caliper.runner.control import RunController
    from caliper.runner.executors import (
        concurrency_limits,
        executor_settings,
        resolve_executor,
    )
    from caliper.runner.job_runner import JobRunner
    from caliper.runner.journaling import RunJournal
    from caliper.runner.judging import LazyEngine
    from caliper.runner.meta import now_iso
    from caliper.runner.prepare import prepare_run
    from caliper.runner.progress import Progress
    from caliper.runner.schedule import Events, schedule
    from caliper.sandbox import finish_removals

    host = host or PluginHost()
    executor = resolve_executor(host, options.executor)
    settings = executor_settings(executor, options.executor_settings)
    prepared = prepare_run(options, host)
    runs = {"": prepared}
    limits = concurrency_limits(options.max_concurrent, runs)
    plan = _plan(prepared, continuation, now_iso())
    cli_version = version_in_background(lambda: _cli_version(prepared))
    judge_engine = LazyEngine(lambda: judge_engine_for(host, options, prepared))
    progress = Progress(
        prepared.spec.tasks,
        options.k,
        console=progress_console,
        title=f"caliper run {prepared.spec.name} ({prepared.engine.label})",
    )
    adaptive = None
    if options.adaptive is not None:
        from caliper.runner.adaptive import AdaptiveK, check_bar_tasks

        check_bar_tasks(options.adaptive, [task.name for task in prepared.spec.tasks])

        adaptive = AdaptiveK(options.adaptive, [task.name for task in prepared.spec.tasks])
    journal = RunJournal(
        prepared,
        plan,
        judge_engine=judge_engine,
        cli_version=cli_version,
        notify=lambda text: _notify(progress, text),
    )
    journal.open()
    keeper = None
    if options.keep_workdirs:
        from caliper.runner.workdirs import WorkdirKeeper, archive_folder

        assert journal.run_id is not None
        keeper = WorkdirKeeper(
            archive_folder(journal.folder, journal.run_id),
            max_bytes=options.workdir_max_bytes,
            run_max_bytes=options.workdirs_max_bytes,
        )
    controller = RunController(notify=lambda text: _notify(progress, text))
    work = RunWork(
        runs=runs,
        run_here=JobRunner(runs, controller, {"": judge_engine}, {"": keeper}),
        controller=controller,
        workers=options.workers,
        max_concurrent=limits,
    )
    backend_id = prepared.engine.backend_id
    jobs = (
        []
        if adaptive is not None
        else [AttemptJob(name, number, "", backend_id) for name, number in plan.jobs]
    )

    def attempt_done(finished: FinishedAttempt) -> None:
        assert finished.record is not None
        journal.record(finished.record)
        progress.attempt_done(finished.record)

    def task_aborted(finished: FinishedAttempt) -> None:
        journal.aborted(finished.job.task_name)
        progress.task_aborted(finished.job.task_name)

    process.reset_stop()
    process.adopt_orphans()
    controller.install_signals()
    try:
        for record in journal.carried_records:
            progress.attempt_done(record)
        session = executor.start(work, settings)
        try:
            with progress:
                execution = schedule(
                    work,
                    session,
                    jobs,
                    events=Events(attempt_done=attempt_done, task_aborted=task_aborted),
                    adaptive={"": adaptive} if adaptive is not None else None,
                )
        finally:
            session.close()
        process.sweep_orphans()
        finish_removals()  # the sandboxes, deleted in the background
        stop_reason = None
        if execution.interrupted or execution.fatal is not None:
            stop_reason = prepared.secrets.redact(execution.stop_reason) or "stopped"
        results, saved_to, save_error = journal.finish(
            aborted=execution.aborted[""],
            stop_reason=stop_reason,
            task_stop_reasons=adaptive.reasons() if adaptive is not None else None,
        )
    finally:
        journal.close()
        controller.restore_signals()
        process.reset_stop()
    return RunReport(
        results=results,
        saved_to=saved_to,
        fatal=execution.fatal,
        interrupted=execution.interrupted,
        save_error=save_error,
        stop_signal=execution.stop_signal,
    )


def judge_engine_for(host: PluginHost, options: RunOptions, prepared: PreparedRun) -> Engine:
    """The engine LLM judges use: ``--judge-model`` when given, else the run's own engine.

    Following ``--model`` means a user who only has one agent CLI can grade with it: the same
    backend, and the model ``--model`` named (none named: that backend's judge default, which
    the judge plugin pins, e.g. ``claude-sonnet-5`` for claude-code).
    """
    from caliper.engine import Engine, resolve_engine

    if options.judge_model is not None and options.judge_model.strip():
        return resolve_engine(host, options.judge_model, flag="--judge-model")
    return Engine(prepared.engine.backend, prepared.engine.model, None)


def _plan(prepared: PreparedRun, continuation: Continuation | None, now: str) -> RunPlan:
    from caliper.runner.plan import RunPlan, every_attempt, resume_plan, retry_plan

    if continuation is None:
        return RunPlan(jobs=every_attempt(prepared.spec, prepared.options.k))
    if continuation.kind == "resume":
        return resume_plan(prepared, continuation, now)
    return retry_plan(prepared, continuation)


def _notify(progress: Progress, text: str) -> None:
    """One line for the user on stderr, above the live progress when it is shown."""
    progress.console.print(text, markup=False, highlight=False, soft_wrap=True)
