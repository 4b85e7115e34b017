"""Many engines in one run: ``caliper run SPEC --model A --model B …`` (issue 18).

:func:`run_matrix` runs the spec on every engine from one invocation. Each engine is prepared
(every pre-flight check) before any attempt starts, so a missing CLI for one engine stops the
whole matrix with one message; then all engines' attempts go to **one** executor session (one
pool of ``--workers``, per-backend ``--max-concurrent`` limits), interleaved so no engine waits
for another to finish. Each engine gets its own journal and saved run, exactly like a run of
that engine alone, tied to the others by ``meta.matrix`` (the same ``id``, this run's
``engine`` and the list of ``engines``). ``--judge-model`` applies to every engine; without it
each engine's judges follow that engine (:func:`caliper.runner.judge_engine_for`).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from caliper.errors import CaliperError, SetupError, UsageError

if TYPE_CHECKING:
    from rich.console import Console

    from caliper.executor import AttemptJob, FinishedAttempt
    from caliper.plugins import PluginHost
    from caliper.runner.ending import RunEnding
    from caliper.runner.options import RunOptions
    from caliper.runner.plan import RunPlan
    from caliper.runner.prepare import PreparedRun


@attrs.frozen
class MatrixEnding:
    """A finished (or stopped) matrix: the matrix id and one :class:`RunEnding` per engine."""

    matrix_id: str
    engines: list[str]
    reports: list[RunEnding]

    @property
    def exit_code(self) -> int:
        """The worst over the engines' runs: the highest of their exit codes (a signal's
        ``128 + N`` above everything, then ``3`` setup, ``2`` usage, ``1`` all unusable)."""
        return max((report.exit_code for report in self.reports), default=0)


def new_matrix_id() -> str:
    """A matrix id: the UTC start time, as run ids are, plus 6 random hex digits."""
    from caliper.results.store import new_run_id

    return f"{new_run_id()}-{secrets.token_hex(3)}"


def engine_keys(models: Sequence[str]) -> list[str]:
    """The engines' names in the matrix: each ``--model`` as given (twice is refused)."""
    keys = [model.strip() for model in models]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise UsageError(
            f"--model {twice[0]} is given twice.",
            hint="Name each engine of a matrix once.",
        )
    if any(not key for key in keys):
        raise UsageError("--model '' names no engine.", hint="Write e.g. --model codex:gpt-5.5.")
    return keys


def prepare_engines(
    options: Sequence[RunOptions], keys: Sequence[str], host: PluginHost
) -> dict[str, PreparedRun]:
    """Every engine's pre-flight checks, all before any attempt; what fails is ONE error
    naming each engine that cannot run (with the worst exit code among them, e.g. ``3`` for a
    missing CLI)."""
    from caliper.runner.prepare import prepare_run

    prepared: dict[str, PreparedRun] = {}
    failures: list[tuple[str, CaliperError]] = []
    for key, opts in zip(keys, options, strict=True):
        try:
            prepared[key] = prepare_run(opts, host)
        except CaliperError as exc:
            failures.append((key, exc))
    if not failures:
        return prepared
    if len(failures) == 1:
        key, exc = failures[0]
        raise type(exc)(
            f"--model {key}: {exc.message}", hint=exc.hint, exit_code=exc.exit_code
        ) from exc
    lines = [f"{len(failures)} of the {len(keys)} engines cannot run:"]
    lines += [f"  --model {key}: {exc.message}" for key, exc in failures]
    hints = [exc.hint for _, exc in failures if exc.hint]
    code = max(exc.exit_code for _, exc in failures)
    error = SetupError if code == SetupError.exit_code else CaliperError
    raise error("\n".join(lines), hint="\n".join(dict.fromkeys(hints)) or None, exit_code=code)


def _plan(prepared: PreparedRun, key: str, matrix_id: str, keys: Sequence[str]) -> RunPlan:
    from caliper.runner.plan import RunPlan, every_attempt, shard_plan

    options = prepared.options
    plan = RunPlan(jobs=every_attempt(prepared.spec, options.k))
    if options.shard is not None:
        plan = shard_plan(plan, prepared.spec, options.k, options.shard)
    plan.notes["matrix"] = {"id": matrix_id, "engine": key, "engines": list(keys)}
    return plan


def interleave(jobs_by_engine: dict[str, list[AttemptJob]]) -> list[AttemptJob]:
    """One job of each engine in turn, so the pool works on every engine from the start."""
    lists = list(jobs_by_engine.values())
    longest = max((len(jobs) for jobs in lists), default=0)
    return [jobs[i] for i in range(longest) for jobs in lists if i < len(jobs)]


def run_matrix(
    options: Sequence[RunOptions],
    *,
    host: PluginHost | None = None,
    progress_console: Console | None = None,
) -> MatrixEnding:
    """Run the spec once per ``options`` (one per engine, differing only in ``model``) in one
    pool, and save one run per engine; see :class:`MatrixEnding` for the exit code.

    Raises :class:`CaliperError` subclasses for problems found before the first attempt.
    """
    from caliper import process
    from caliper.cli_versions import version_in_background
    from caliper.executor import AttemptJob, RunWork
    from caliper.plugins import PluginHost
    from caliper.runner import judge_engine_for
    from caliper.runner.control import RunController
    from caliper.runner.ending import RunEnding
    from caliper.runner.executors import concurrency_limits, executor_settings, resolve_executor
    from caliper.runner.job_runner import JobRunner
    from caliper.runner.journaling import RunJournal
    from caliper.runner.judging import LazyEngine
    from caliper.runner.matrix_progress import MatrixProgress
    from caliper.runner.schedule import Events, schedule
    from caliper.sandbox import finish_removals

    host = host or PluginHost()
    first = options[0]
    keys = engine_keys([opts.model or "" for opts in options])
    executor = resolve_executor(host, first.executor)
    settings = executor_settings(executor, first.executor_settings)
    runs = prepare_engines(options, keys, host)
    limits = concurrency_limits(first.max_concurrent, runs)
    matrix_id = new_matrix_id()
    plans = {key: _plan(runs[key], key, matrix_id, keys) for key in keys}
    spec = runs[keys[0]].spec
    progress = MatrixProgress(
        keys,
        spec.tasks,
        first.k,
        console=progress_console,
        title=f"caliper run {spec.name} on {len(keys)} engines (matrix {matrix_id})",
    )

    def notify(text: str) -> None:
        progress.console.print(text, markup=False, highlight=False, soft_wrap=True)

    judges = {
        key: LazyEngine(lambda run=runs[key]: judge_engine_for(host, run.options, run))
        for key in keys
    }
    adaptive = {}
    if first.adaptive is not None:
        from caliper.runner.adaptive import AdaptiveK, check_bar_tasks

        names = [task.name for task in spec.tasks]
        check_bar_tasks(first.adaptive, names)
        adaptive = {key: AdaptiveK(first.adaptive, names) for key in keys}
    journals: dict[str, RunJournal] = {}
    keepers = {}
    controller = RunController(notify=notify)
    try:
        for key in keys:
            run = runs[key]
            journal = RunJournal(
                run,
                plans[key],
                judge_engine=judges[key],
                cli_version=version_in_background(
                    lambda run=run: _cli_version(run)  # one probe per engine
                ),
                notify=notify,
            )
            journal.open()
            journals[key] = journal
            keepers[key] = _keeper(run, journal)
        work = RunWork(
            runs=runs,
            run_here=JobRunner(runs, controller, judges, keepers),
            controller=controller,
            workers=first.workers,
            max_concurrent=limits,
        )
        jobs = interleave(
            {
                key: [
                    AttemptJob(name, number, key, runs[key].engine.backend_id)
                    for name, number in plans[key].jobs
                ]
                for key in keys
                if key not in adaptive
            }
        )

        def attempt_done(finished: FinishedAttempt) -> None:
            assert finished.record is not None
            journals[finished.job.engine_key].record(finished.record)
            progress.attempt_done(finished.job.engine_key, finished.record)

        def task_aborted(finished: FinishedAttempt) -> None:
            journals[finished.job.engine_key].aborted(finished.job.task_name)
            progress.task_aborted(finished.job.engine_key, finished.job.task_name)

        process.reset_stop()
        process.adopt_orphans()
        controller.install_signals()
        try:
            session = executor.start(work, settings)
            try:
                with progress:
                    execution = schedule(
                        work,
                        session,
                        jobs,
                        events=Events(attempt_done=attempt_done, task_aborted=task_aborted),
                        adaptive=adaptive or None,
                    )
            finally:
                session.close()
            process.sweep_orphans()
            finish_removals()
            reports = []
            for key in keys:
                run = runs[key]
                stop_reason = None
                if execution.interrupted or execution.fatal is not None:
                    stop_reason = run.secrets.redact(execution.stop_reason) or "stopped"
                state = adaptive.get(key)
                results, saved_to, save_error = journals[key].finish(
                    aborted=execution.aborted[key],
                    stop_reason=stop_reason,
                    task_stop_reasons=state.reasons() if state is not None else None,
                )
                reports.append(
                    RunEnding(
                        results=results,
                        saved_to=saved_to,
                        fatal=execution.fatal,
                        interrupted=execution.interrupted,
                        save_error=save_error,
                        stop_signal=execution.stop_signal,
                    )
                )
        finally:
            controller.restore_signals()
            process.reset_stop()
            process.release_orphans()
    finally:
        for journal in journals.values():
            journal.close()
    return MatrixEnding(matrix_id=matrix_id, engines=keys, reports=reports)


def _cli_version(prepared: PreparedRun) -> str | None:
    try:
        return prepared.engine.backend.cli_version(prepared.cli_path)
    except Exception:  # a version probe must never break a run
        return None


def _keeper(prepared: PreparedRun, journal):  # type: ignore[no-untyped-def]
    """``--keep-workdirs``: the engine's own archive folder beside its run."""
    options = prepared.options
    if not options.keep_workdirs:
        return None
    from caliper.runner.workdirs import WorkdirKeeper, archive_folder

    assert journal.run_id is not None
    return WorkdirKeeper(
        archive_folder(journal.folder, journal.run_id),
        max_bytes=options.workdir_max_bytes,
        run_max_bytes=options.workdirs_max_bytes,
    )
