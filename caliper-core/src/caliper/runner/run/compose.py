"""The one orchestration of a run: a set of engine keys through plan → schedule → assemble.

:func:`run_engines` is what every run goes through. ``caliper run SPEC`` (and
:func:`caliper.run`) is the one-engine case, key ``""`` (:func:`caliper.runner.run_spec`);
several ``--model`` are the many-engine case, keyed by each ``--model`` as given and tied by a
matrix id (:func:`caliper.runner.matrix.run_matrix`). Either way: every engine is prepared
before any attempt starts, each engine gets its own plan, journal and saved run, and all
engines' attempts go to **one** executor session (one pool of ``--workers``, per-backend
``--max-concurrent`` limits), one job of each engine in turn.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

import attrs

from caliper.errors import CaliperError, SetupError

if TYPE_CHECKING:
    from rich.console import Console

    from caliper.host.plugins import PluginHost
    from caliper.plugin.executor import AttemptJob, ExecutorSession, FinishedAttempt, RunWork
    from caliper.results.models import AttemptRecord
    from caliper.runner.adaptive import AdaptiveK
    from caliper.runner.attempt.judging import LazyEngine
    from caliper.runner.attempt.workdirs import WorkdirKeeper
    from caliper.runner.matrix_progress import MatrixProgress
    from caliper.runner.progress import Progress
    from caliper.runner.run.control import RunController
    from caliper.runner.run.ending import RunEnding
    from caliper.runner.run.journaling import RunJournal
    from caliper.runner.run.options import RunOptions
    from caliper.runner.run.plan import Continuation, RunPlan
    from caliper.runner.run.prepare import PreparedRun
    from caliper.runner.run.schedule import Events, Execution


def run_engines(
    options: Mapping[str, RunOptions],
    *,
    host: PluginHost | None = None,
    progress_console: Console | None = None,
    continuation: Continuation | None = None,
    matrix_id: str | None = None,
    warm_up: Callable[[], None] | None = None,
) -> dict[str, RunEnding]:
    """Run the spec once per engine key of ``options`` in one pool and save one run each;
    return each key's :class:`~caliper.runner.RunEnding`, in the order of ``options``.

    The options differ only in ``model``; executor, workers and limits are the first's.
    ``continuation`` resumes or retries a saved run (one engine only). ``matrix_id`` ties the
    engines' runs together (``meta.matrix``) and shows the engines side by side while they run.
    ``warm_up`` is called once the first attempts are out (what the caller needs at the end,
    imported while the agents run).

    Raises :class:`~caliper.errors.CaliperError` subclasses for problems found before the
    first attempt.
    """
    from caliper.host.plugins import PluginHost
    from caliper.plugin.executor import RunWork
    from caliper.runner.run.control import RunController
    from caliper.runner.run.executors import concurrency_limits, executor_settings, resolve_executor
    from caliper.runner.run.job_runner import JobRunner
    from caliper.runner.run.meta import now_iso
    from caliper.runner.run.plan import attempt_jobs, plan_run

    if continuation is not None and len(options) != 1:
        raise ValueError("a resume or retry continues one engine's run")
    host = host or PluginHost()
    first = next(iter(options.values()))
    executor = resolve_executor(host, first.executor)
    settings = executor_settings(executor, first.executor_settings)
    runs = prepare_engines(options, host)
    from caliper.system.ledger import clean_dead_and_say

    clean_dead_and_say(lambda text: _notify([], text))  # what a killed run left behind
    limits = concurrency_limits(first.max_concurrent, runs)
    now = now_iso()
    plans = {key: plan_run(run, continuation, now) for key, run in runs.items()}
    if matrix_id is not None:
        for key, plan in plans.items():
            plan.notes["matrix"] = {"id": matrix_id, "engine": key, "engines": list(runs)}
    adaptive = _adaptive_k(runs)
    shown: list[_Display] = []  # the live display, made once the first attempts are out

    def say(text: str) -> None:
        _notify(shown, text)

    controller = RunController(notify=say)
    journals: dict[str, RunJournal] = {}
    judges = {key: _judge_engine(host, run) for key, run in runs.items()}
    keepers: dict[str, WorkdirKeeper | None] = {}
    starting = _FirstStarts()
    runner = JobRunner(runs, controller, judges, keepers, prepare_ahead=first.workers)
    work = RunWork(
        runs=runs,
        run_here=starting.counting(runner),
        controller=controller,
        workers=first.workers,
        max_concurrent=limits,
    )
    # the executor starts (connects, checks its nodes) before any run id is claimed, so an
    # executor that cannot run the work leaves no empty journal behind
    session = executor.start(work, settings)
    try:
        # a resume checks and rewrites its journal, and --keep-workdirs files the work
        # folders under the run id, before the first attempt; any other run claims its id
        # once the first attempts are out (the journal is first written to when one ends)
        for key, run in runs.items():
            if plans[key].run_id is not None or run.options.keep_workdirs:
                journals[key], keepers[key] = _open_journal(run, plans[key], judges[key], say)
        with _stop_handling(controller), contextlib.ExitStack() as live:

            def start_the_rest() -> None:
                # the first agents' sandboxes are being made in the workers' threads: let
                # them start before taking the interpreter for what can wait
                starting.wait(session.in_flight())
                for key, run in runs.items():
                    if key not in journals:
                        journals[key], keepers[key] = _open_journal(
                            run, plans[key], judges[key], say
                        )
                progress = _display(runs, progress_console, matrix_id)
                shown.append(progress)
                for key, journal in journals.items():
                    for record in journal.carried_records:
                        progress.attempt_done(key, record)
                live.enter_context(progress.live)
                _import_end_of_run()
                if warm_up is not None:
                    warm_up()

            execution = _execute(
                work,
                session,
                attempt_jobs(plans, runs),
                _events(journals, shown, start_the_rest),
                adaptive,
                runner.close,
            )
            live.close()
            endings = {
                key: _finish(key, journals[key], runs[key], execution, adaptive.get(key))
                for key in runs
            }
            if controller.killed and not execution.interrupted:
                # the stop came after the last attempt, while the results were being saved:
                # they are whole, and the run still ends as the signal asks
                import attrs

                endings = {
                    key: attrs.evolve(e, interrupted=True, stop_signal=controller.stop_signal)
                    for key, e in endings.items()
                }
            return endings
    finally:
        session.close()
        for journal in journals.values():
            journal.close()
        from caliper.system.ledger import release_idle

        release_idle()  # the run's sandboxes are gone: so is its ledger


def prepare_engines(options: Mapping[str, RunOptions], host: PluginHost) -> dict[str, PreparedRun]:
    """Every engine's pre-flight checks (:func:`caliper.runner.run.prepare.prepare_run`), all
    before any attempt. With one engine its error is raised as it is; with several, what fails
    is ONE error naming each engine that cannot run (with the worst exit code among them,
    e.g. ``3`` for a missing CLI)."""
    from caliper.runner.run.prepare import prepare_run

    if len(options) == 1:
        return {key: prepare_run(opts, host) for key, opts in options.items()}
    prepared: dict[str, PreparedRun] = {}
    failures: list[tuple[str, CaliperError]] = []
    for key, opts in options.items():
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
    lines = [f"{len(failures)} of the {len(options)} engines cannot run:"]
    lines += [f"  --model {key}: {exc.message}" for key, exc in failures]
    hints = [exc.hint for _, exc in failures if exc.hint]
    code = max(exc.exit_code for _, exc in failures)
    error = SetupError if code == SetupError.exit_code else CaliperError
    raise error("\n".join(lines), hint="\n".join(dict.fromkeys(hints)) or None, exit_code=code)


def _adaptive_k(runs: Mapping[str, PreparedRun]) -> dict[str, AdaptiveK]:
    """``--k auto``'s bookkeeping per engine key, after checking its bars name tasks of the
    spec (empty for a fixed k)."""
    found = {}
    for key, run in runs.items():
        settings = run.options.adaptive
        if settings is not None:
            from caliper.runner.adaptive import AdaptiveK, check_bar_tasks

            names = [task.name for task in run.spec.tasks]
            check_bar_tasks(settings, names)
            found[key] = AdaptiveK(settings, names)
    return found


class _FirstStarts:
    """Waiting, once, for the first jobs handed out to start a process (their agent, or a
    setup command) or to end without one, as this process sees them (``run_process``'s
    count of starts; the jobs' ends through :meth:`counting`). Jobs another executor runs
    elsewhere do neither here: the wait then ends after :attr:`LONGEST` seconds."""

    LONGEST = 0.25
    """Seconds waited at most (making an attempt's sandbox takes ~0.05 s of CPU)."""
    POLL = 0.002

    def __init__(self) -> None:
        from caliper.system import process

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
        import time

        from caliper.system import process

        deadline = time.monotonic() + self.LONGEST
        while (
            process.starts_so_far() - self._starts_before + len(self._ended) < jobs
            and time.monotonic() < deadline
        ):
            time.sleep(self.POLL)


@attrs.frozen
class _Display:
    """The live progress of a run, told which engine each attempt belongs to: one engine's
    :class:`~caliper.runner.progress.Progress` (a line per task) or, for a matrix, a
    :class:`~caliper.runner.matrix_progress.MatrixProgress` (a line per engine and task)."""

    live: Progress | MatrixProgress
    """Entered while the attempts run."""
    attempt_done: Callable[[str, AttemptRecord], None]
    """Count a finished attempt of an engine key."""
    task_aborted: Callable[[str, str], None]
    """Mark a task of an engine key stopped by ``--fail-fast``."""

    def notify(self, text: str) -> None:
        """One line for the user on stderr, above the live progress when it is shown."""
        self.live.console.print(text, markup=False, highlight=False, soft_wrap=True)


def _display(
    runs: Mapping[str, PreparedRun], console: Console | None, matrix_id: str | None
) -> _Display:
    """One engine's task lines, or (a matrix, or several engines) a line per engine and task."""
    first = next(iter(runs.values()))
    spec, k = first.spec, first.options.k
    if matrix_id is None and len(runs) == 1:
        from caliper.runner.progress import Progress

        title = f"caliper run {spec.name} ({first.engine.label})"
        one = Progress(spec.tasks, k, console=console, title=title)
        return _Display(
            one,
            attempt_done=lambda _key, record: one.attempt_done(record),
            task_aborted=lambda _key, name: one.task_aborted(name),
        )
    from caliper.runner.matrix_progress import MatrixProgress

    title = f"caliper run {spec.name} on {len(runs)} engines" + (
        f" (matrix {matrix_id})" if matrix_id is not None else ""
    )
    many = MatrixProgress(list(runs), spec.tasks, k, console=console, title=title)
    return _Display(many, attempt_done=many.attempt_done, task_aborted=many.task_aborted)


END_OF_RUN_MODULES = ("caliper.runner.attempt.judge_calls",)
"""Modules a run imports only when its first attempt ends (judging it), imported while the
first agents run instead (the journal and the results store are imported by then)."""


def _import_end_of_run() -> None:
    """Import :data:`END_OF_RUN_MODULES` and have the results codec ready to decode the run
    (what the results file is assembled with at the end)."""
    import importlib

    from caliper.results import codec

    for name in END_OF_RUN_MODULES:
        importlib.import_module(name)
    codec.prepare_structuring()


def _notify(shown: list[_Display], text: str) -> None:
    """One line for the user: above the live display once there is one, else on stderr (made
    safe to print as the display's console would)."""
    if shown:
        shown[0].notify(text)
        return
    import sys

    from caliper.system.textsafe import printable

    print(printable(text), file=sys.stderr, flush=True)


def _judge_engine(host: PluginHost, prepared: PreparedRun) -> LazyEngine:
    """One engine's judge engine, made on first use."""
    from caliper.runner import judge_engine_for
    from caliper.runner.attempt.judging import LazyEngine

    return LazyEngine(lambda: judge_engine_for(host, prepared.options, prepared))


def _open_journal(
    prepared: PreparedRun, plan: RunPlan, judge_engine: LazyEngine, notify: Callable[[str], None]
) -> tuple[RunJournal, WorkdirKeeper | None]:
    """One engine's journal (opened: the run id is claimed) and the ``--keep-workdirs``
    keeper (``None`` without the flag)."""
    from caliper.plugin.cli_versions import version_in_background
    from caliper.runner.run.journaling import RunJournal

    journal = RunJournal(
        prepared,
        plan,
        judge_engine=judge_engine,
        cli_version=version_in_background(lambda: _cli_version(prepared)),
        notify=notify,
    )
    journal.open()
    keeper = None
    options = prepared.options
    if options.keep_workdirs:
        from caliper.runner.attempt.workdirs import WorkdirKeeper, archive_folder

        assert journal.run_id is not None
        keeper = WorkdirKeeper(
            archive_folder(journal.folder, journal.run_id),
            max_bytes=options.workdir_max_bytes,
            run_max_bytes=options.workdirs_max_bytes,
        )
    return journal, keeper


@contextlib.contextmanager
def _stop_handling(controller: RunController) -> Iterator[None]:
    """Signals stop the run (not the process) and no started process outlives it, from the
    first attempt until the results are saved; afterwards this process is as it was (its
    signal handlers back, no longer adopting orphans), which matters to :func:`caliper.run`'s
    callers."""
    from caliper.system import process

    process.reset_stop()
    process.adopt_orphans()
    controller.install_signals()
    try:
        yield
    finally:
        controller.restore_signals()
        process.release_orphans()
        process.reset_stop()


def _execute(
    work: RunWork,
    session: ExecutorSession,
    jobs: list[AttemptJob],
    events: Events,
    adaptive: Mapping[str, AdaptiveK],
    drained: Callable[[], None],
) -> Execution:
    """Schedule ``jobs`` on the executor's ``session``; then ``drained`` (the sandboxes made
    ahead and never used are removed), end orphaned processes and wait for the sandboxes'
    background deletion."""
    from caliper.plugin.sandbox import finish_removals
    from caliper.runner.run.schedule import schedule
    from caliper.system import process

    try:
        execution = schedule(work, session, jobs, events=events, adaptive=adaptive)
    finally:
        drained()
    process.sweep_orphans()
    finish_removals()
    return execution


def _events(
    journals: Mapping[str, RunJournal], shown: list[_Display], started: Callable[[], None]
) -> Events:
    """Each finished attempt to its engine's journal and to the progress display (both made
    by ``started``, which the scheduler calls before the first attempt is handed back)."""
    from caliper.runner.run.schedule import Events

    def attempt_done(finished: FinishedAttempt) -> None:
        assert finished.record is not None
        key = finished.job.engine_key
        journals[key].record(finished.record)
        shown[0].attempt_done(key, finished.record)

    def task_aborted(finished: FinishedAttempt) -> None:
        key, name = finished.job.engine_key, finished.job.task_name
        journals[key].aborted(name)
        shown[0].task_aborted(key, name)

    return Events(attempt_done=attempt_done, task_aborted=task_aborted, started=started)


def _finish(
    key: str,
    journal: RunJournal,
    prepared: PreparedRun,
    execution: Execution,
    adaptive: AdaptiveK | None,
) -> RunEnding:
    """Assemble and save engine ``key``'s run from its journal; how it ended."""
    from caliper.errors import SetupError
    from caliper.runner.run.ending import RunEnding

    stop_reason = None
    if execution.interrupted or execution.fatal is not None:
        stop_reason = prepared.secrets.redact(execution.stop_reason) or "stopped"
    # The agent could not start (a missing login, say): nothing was measured, so no run is kept.
    never_started = isinstance(execution.fatal, SetupError) and journal.never_started()
    results, saved_to, save_error = journal.finish(
        aborted=execution.aborted[key],
        stop_reason=stop_reason,
        task_stop_reasons=adaptive.reasons() if adaptive is not None else None,
        save=not never_started,
    )
    return RunEnding(
        results=results,
        saved_to=saved_to,
        fatal=execution.fatal,
        interrupted=execution.interrupted,
        save_error=save_error,
        stop_signal=execution.stop_signal,
        never_started=never_started,
    )


def _cli_version(prepared: PreparedRun) -> str | None:
    try:
        return prepared.engine.backend.cli_version(prepared.cli_path)
    except Exception:  # a version probe must never break a run
        return None
