"""The runner: from a spec file to a saved run (``caliper run``).

``run_spec`` composes the steps, each owned by one module (see ``docs/architecture.md``):
pre-flight checks (:mod:`.prepare`) → plan (:mod:`.plan`, pure) → schedule (:mod:`.schedule`)
through an executor (:mod:`caliper.executor`; ``local`` by default), each job running the
attempt pipeline (:mod:`.attempt_pipeline`) → journal each finished attempt (:mod:`.journaling`) →
assemble the results (:mod:`.assemble`, pure) and save them → :class:`RunEnding`, which
decides the exit code (:mod:`.ending`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from caliper.runner.ending import EXIT_ALL_UNUSABLE, EXIT_INTERRUPTED, EXIT_OK, RunEnding
from caliper.runner.options import RunOptions

if TYPE_CHECKING:
    from rich.console import Console

    from caliper.engine import Engine
    from caliper.executor import AttemptJob, Executor, FinishedAttempt, RunWork
    from caliper.plugins import PluginHost
    from caliper.runner.adaptive import AdaptiveK
    from caliper.runner.control import RunController
    from caliper.runner.journaling import RunJournal
    from caliper.runner.judging import LazyEngine
    from caliper.runner.plan import Continuation, RunPlan
    from caliper.runner.prepare import PreparedRun
    from caliper.runner.progress import Progress
    from caliper.runner.schedule import Events, Execution
    from caliper.runner.workdirs import WorkdirKeeper

__all__ = [
    "EXIT_ALL_UNUSABLE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "RunEnding",
    "RunOptions",
    "run_spec",
]


def run_spec(
    options: RunOptions,
    *,
    host: PluginHost | None = None,
    progress_console: Console | None = None,
    continuation: Continuation | None = None,
) -> RunEnding:
    """Run ``options.spec_path`` and save the results; :class:`RunEnding` says how it ended.

    ``continuation`` resumes a saved run (same id, only its missing attempts) or retries one
    (a new run; see :mod:`.plan`). Every finished attempt goes to the run's journal at once;
    the results file is assembled from it at the end.

    Raises :class:`~caliper.errors.CaliperError` subclasses for problems found before the
    first attempt.
    """
    from caliper.executor import RunWork
    from caliper.plugins import PluginHost
    from caliper.runner.control import RunController
    from caliper.runner.executors import concurrency_limits, executor_settings, resolve_executor
    from caliper.runner.job_runner import JobRunner
    from caliper.runner.meta import now_iso
    from caliper.runner.plan import attempt_jobs, plan_run
    from caliper.runner.prepare import prepare_run

    host = host or PluginHost()
    executor = resolve_executor(host, options.executor)
    settings = executor_settings(executor, options.executor_settings)
    prepared = prepare_run(options, host)
    runs = {"": prepared}
    limits = concurrency_limits(options.max_concurrent, runs)
    plans = {"": plan_run(prepared, continuation, now_iso())}
    adaptive = _adaptive_k(prepared)
    progress = _progress(prepared, progress_console)
    journal, judge_engine, keeper = _open_journal(prepared, plans[""], host, progress)
    controller = RunController(notify=lambda text: _notify(progress, text))
    work = RunWork(
        runs=runs,
        run_here=JobRunner(runs, controller, {"": judge_engine}, {"": keeper}),
        controller=controller,
        workers=options.workers,
        max_concurrent=limits,
    )
    try:
        with _stop_handling(controller):
            for record in journal.carried_records:
                progress.attempt_done(record)
            with progress:
                execution = _execute(
                    executor,
                    settings,
                    work,
                    attempt_jobs(plans, runs),
                    _events(journal, progress),
                    {"": adaptive} if adaptive is not None else {},
                )
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
    return RunEnding(
        results=results,
        saved_to=saved_to,
        fatal=execution.fatal,
        interrupted=execution.interrupted,
        save_error=save_error,
        stop_signal=execution.stop_signal,
    )


def _execute(
    executor: Executor,
    settings: Mapping[str, str],
    work: RunWork,
    jobs: list[AttemptJob],
    events: Events,
    adaptive: Mapping[str, AdaptiveK],
) -> Execution:
    """Schedule ``jobs`` on a session of ``executor`` (closed whatever happens), then end
    orphaned processes and wait for the sandboxes' background deletion."""
    from caliper import process
    from caliper.runner.schedule import schedule
    from caliper.sandbox import finish_removals

    session = executor.start(work, settings)
    try:
        execution = schedule(work, session, jobs, events=events, adaptive=adaptive)
    finally:
        session.close()
    process.sweep_orphans()
    finish_removals()
    return execution


@contextlib.contextmanager
def _stop_handling(controller: RunController) -> Iterator[None]:
    """Signals stop the run (not the process) and no started process outlives it, from the
    first attempt until the results are saved."""
    from caliper import process

    process.reset_stop()
    process.adopt_orphans()
    controller.install_signals()
    try:
        yield
    finally:
        controller.restore_signals()
        process.reset_stop()
        process.release_orphans()


def _adaptive_k(prepared: PreparedRun) -> AdaptiveK | None:
    """``--k auto``'s bookkeeping, after checking its bars name tasks of the spec."""
    settings = prepared.options.adaptive
    if settings is None:
        return None
    from caliper.runner.adaptive import AdaptiveK, check_bar_tasks

    names = [task.name for task in prepared.spec.tasks]
    check_bar_tasks(settings, names)
    return AdaptiveK(settings, names)


def _progress(prepared: PreparedRun, console: Console | None) -> Progress:
    from caliper.runner.progress import Progress

    return Progress(
        prepared.spec.tasks,
        prepared.options.k,
        console=console,
        title=f"caliper run {prepared.spec.name} ({prepared.engine.label})",
    )


def _open_journal(
    prepared: PreparedRun, plan: RunPlan, host: PluginHost, progress: Progress
) -> tuple[RunJournal, LazyEngine, WorkdirKeeper | None]:
    """The run's journal (opened: the run id is claimed), its lazy judge engine, and the
    ``--keep-workdirs`` keeper (``None`` without the flag)."""
    from caliper.cli_versions import version_in_background
    from caliper.runner.journaling import RunJournal
    from caliper.runner.judging import LazyEngine

    judge_engine = LazyEngine(lambda: judge_engine_for(host, prepared.options, prepared))
    journal = RunJournal(
        prepared,
        plan,
        judge_engine=judge_engine,
        cli_version=version_in_background(lambda: _cli_version(prepared)),
        notify=lambda text: _notify(progress, text),
    )
    journal.open()
    keeper = None
    options = prepared.options
    if options.keep_workdirs:
        from caliper.runner.workdirs import WorkdirKeeper, archive_folder

        assert journal.run_id is not None
        keeper = WorkdirKeeper(
            archive_folder(journal.folder, journal.run_id),
            max_bytes=options.workdir_max_bytes,
            run_max_bytes=options.workdirs_max_bytes,
        )
    return journal, judge_engine, keeper


def _events(journal: RunJournal, progress: Progress) -> Events:
    """Each finished attempt to the journal and the progress display, as it comes."""
    from caliper.runner.schedule import Events

    def attempt_done(finished: FinishedAttempt) -> None:
        assert finished.record is not None
        journal.record(finished.record)
        progress.attempt_done(finished.record)

    def task_aborted(finished: FinishedAttempt) -> None:
        journal.aborted(finished.job.task_name)
        progress.task_aborted(finished.job.task_name)

    return Events(attempt_done=attempt_done, task_aborted=task_aborted)


def _cli_version(prepared: PreparedRun) -> str | None:
    try:
        return prepared.engine.backend.cli_version(prepared.cli_path)
    except Exception:  # a version probe must never break a run
        return None


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


def _notify(progress: Progress, text: str) -> None:
    """One line for the user on stderr, above the live progress when it is shown."""
    progress.console.print(text, markup=False, highlight=False, soft_wrap=True)
