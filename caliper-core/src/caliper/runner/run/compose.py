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
import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

import attrs

from caliper.errors import CaliperError, SetupError
from caliper.host.plugins import PluginHost
from caliper.plugin.executor import RunBundle, RunWork
from caliper.plugin.sandbox import finish_removals
from caliper.runner.attempt.judge_calls import judge_engine_for
from caliper.runner.attempt.judging import LazyEngine
from caliper.runner.run.control import RunController
from caliper.runner.run.ending import RunEnding
from caliper.runner.run.executors import concurrency_limits, executor_settings, resolve_executor
from caliper.runner.run.job_runner import JobRunner
from caliper.runner.run.meta import now_iso
from caliper.runner.run.plan import Continuation, attempt_jobs, interleave, plan_run
from caliper.runner.run.prepare import prepare_run
from caliper.runner.run.schedule import Events, schedule
from caliper.runner.run.startup import FirstStarts, import_end_of_run
from caliper.system import attrs_classes, process
from caliper.system.ledger import clean_dead_and_say, release_idle
from caliper.system.textsafe import printable

if TYPE_CHECKING:
    from rich.console import Console

    from caliper.plugin.executor import AttemptJob, ExecutorSession, FinishedAttempt
    from caliper.results.models import AttemptRecord
    from caliper.runner.adaptive import AdaptiveK
    from caliper.runner.attempt.workdirs import WorkdirKeeper
    from caliper.runner.matrix_progress import MatrixProgress
    from caliper.runner.progress import Progress
    from caliper.runner.run.journaling import RunJournal
    from caliper.runner.run.options import RunOptions, RunSettings
    from caliper.runner.run.plan import RunPlan
    from caliper.runner.run.prepare import PreparedRun
    from caliper.runner.run.schedule import Execution


@attrs_classes.frozen
class Tie:
    """How the engine keys of one run belong together: a matrix (one key per ``--model``) or
    a baseline (a full and a control arm per engine).

    ``notes`` are the metadata fields each key's saved run gets (``meta.matrix``,
    ``meta.baseline``); ``title`` heads the live display (a line per key and task);
    ``order`` puts every key's jobs in the one queue the scheduler hands out from;
    ``adaptive`` makes ``--k auto``'s bookkeeping for the prepared runs (``None``: each key
    decides its own tasks).
    """

    notes: Mapping[str, Mapping[str, Any]]
    title: str
    order: Callable[[Mapping[str, list[AttemptJob]]], list[AttemptJob]] = interleave
    adaptive: Callable[[Mapping[str, PreparedRun]], dict[str, AdaptiveK]] | None = None


def run_engines(
    options: Mapping[str, RunOptions],
    settings: RunSettings,
    *,
    host: PluginHost | None = None,
    progress_console: Console | None = None,
    continuation: Continuation | Mapping[str, Continuation] | None = None,
    tie: Tie | None = None,
    warm_up: Callable[[], None] | None = None,
) -> dict[str, RunEnding]:
    """Run the spec once per engine key of ``options`` in one pool and save one run each;
    return each key's :class:`~caliper.runner.RunEnding`, in the order of ``options``.

    ``options`` are the per-key settings; ``settings`` the run-level ones (executor, workers,
    limits: one session for every key). ``continuation`` resumes or retries saved runs: one
    (a run of one key), or one per key (a baseline pair). ``tie`` says how the keys belong
    together (a matrix, a baseline; see :class:`Tie`). ``warm_up`` is called once the first
    attempts are out (what the caller needs at the end, imported while the agents run).

    Raises :class:`~caliper.errors.CaliperError` subclasses for problems found before the
    first attempt.
    """
    continuations = _continuations(options, continuation)
    host = host or PluginHost()
    executor = resolve_executor(host, settings.executor)
    executor_config = executor_settings(executor, settings.executor_settings)
    runs = prepare_engines(options, host)
    clean_dead_and_say(lambda text: _notify([], text))  # what a killed run left behind
    limits = concurrency_limits(settings.max_concurrent, runs)
    run = _Run(runs, _plans(runs, continuations, tie), host)
    adaptive = tie.adaptive(runs) if tie is not None and tie.adaptive else _adaptive_k(runs)
    starting = FirstStarts()
    runner = JobRunner(
        runs, run.controller, run.judges, run.keepers, prepare_ahead=settings.workers
    )
    here = starting.counting(runner)
    work = run_work(runs, here, settings.workers, limits, run.controller.stop_requested.is_set)
    # the executor starts (connects, checks its nodes) before any run id is claimed, so an
    # executor that cannot run the work leaves no empty journal behind
    session = executor.start(work, executor_config)
    try:
        # a resume checks and rewrites its journal, and --keep-workdirs files the work
        # folders under the run id, before the first attempt; any other run claims its id
        # once the first attempts are out (the journal is first written to when one ends)
        run.open_journals(early=True)
        with _stop_handling(run.controller), contextlib.ExitStack() as live:

            def start_the_rest() -> None:
                # the first agents' sandboxes are being made in the workers' threads: let
                # them start before taking the interpreter for what can wait
                starting.wait(session.in_flight())
                run.open_journals()
                live.enter_context(run.show(progress_console, tie))
                import_end_of_run()
                if warm_up is not None:
                    warm_up()

            jobs = attempt_jobs(run.plans, runs, tie.order if tie is not None else interleave)
            runner.expect(None if adaptive else len(jobs))  # --k auto: more may come
            events = _events(run.journals, run.shown, start_the_rest)
            execution = _execute(run, settings, session, jobs, events, adaptive, runner.close)
            live.close()
            if settings.max_cost is not None and execution.spent is None:
                run.say(
                    "Note: no attempt reported a cost, so --max-cost could not limit this run "
                    "(the agent CLI does not report one)."
                )
            return run.endings(execution, adaptive)  # saved while the sandboxes are deleted
    finally:
        session.close()
        run.close()
        _release_sandboxes()


def _release_sandboxes() -> None:
    """Wait for the run's sandboxes to be deleted (in the background since each attempt
    ended), then close the run's ledger: its sandboxes are gone."""
    finish_removals()
    release_idle()


def _continuations(
    options: Mapping[str, RunOptions],
    continuation: Continuation | Mapping[str, Continuation] | None,
) -> dict[str, Continuation]:
    """The saved run each key continues: one continuation is of a one-key run."""
    if continuation is None:
        return {}
    if isinstance(continuation, Continuation):
        if len(options) != 1:
            raise ValueError("a resume or retry continues one engine's run")
        return {key: continuation for key in options}
    return dict(continuation)


def _plans(
    runs: Mapping[str, PreparedRun], continuations: Mapping[str, Continuation], tie: Tie | None
) -> dict[str, RunPlan]:
    """Each key's plan, with the notes its ``tie`` gives it (``meta.matrix``, ``meta.baseline``)."""
    now = now_iso()
    plans = {key: plan_run(run, continuations.get(key), now) for key, run in runs.items()}
    if tie is not None:
        for key, plan in plans.items():
            plan.notes.update(tie.notes.get(key, {}))
    return plans


def bundle(prepared: PreparedRun) -> RunBundle:
    """``prepared`` as the executor contract's opaque bundle: packed
    (:func:`caliper.runner.run.portable.pack`) only when an executor asks for its payload,
    which the ``local`` executor never does."""

    def packed() -> bytes:
        from caliper.runner.run.portable import pack

        return pack(prepared).to_bytes()

    return RunBundle(prepared.engine.label, packed, keep_workdirs=prepared.options.keep_workdirs)


def run_work(
    runs: Mapping[str, PreparedRun],
    run_here: Callable[[AttemptJob], FinishedAttempt],
    workers: int,
    limits: Mapping[str, int],
    stop_requested: Callable[[], bool],
) -> RunWork:
    """What the executor gets for the prepared ``runs``: a bundle (:func:`bundle`) and a
    backend per engine key, how to run a job here, the run's limits and its stop state."""
    return RunWork(
        bundles={key: bundle(run) for key, run in runs.items()},
        backend_of={key: run.engine.backend_id for key, run in runs.items()},
        run_here=run_here,
        workers=workers,
        max_concurrent=limits,
        stop_requested=stop_requested,
    )


class _Run:
    """The state of one run while it goes: its engines' prepared runs and plans, the stop
    controller, and (made as the run goes) the journals, work-folder keepers and display."""

    def __init__(
        self, runs: Mapping[str, PreparedRun], plans: Mapping[str, RunPlan], host: PluginHost
    ) -> None:
        """Judge engines are made on first use; no journal is opened yet."""
        self.runs = runs
        self.plans = plans
        self.shown: list[_Display] = []  # the live display, made once the first attempts are out
        self.controller = RunController(notify=self.say)
        self.journals: dict[str, RunJournal] = {}
        self.judges = {key: _judge_engine(host, run) for key, run in runs.items()}
        self.keepers: dict[str, WorkdirKeeper | None] = {}

    def say(self, text: str) -> None:
        """One line for the user (above the live display once it is shown)."""
        _notify(self.shown, text)

    def open_journals(self, *, early: bool = False) -> None:
        """Open the journals not opened yet; ``early``: only those that must be open before
        the first attempt (a resume's, and those of runs with ``--keep-workdirs``)."""
        for key, run in self.runs.items():
            if key in self.journals:
                continue
            if early and self.plans[key].run_id is None and not run.options.keep_workdirs:
                continue
            self.journals[key], self.keepers[key] = _open_journal(
                run, self.plans[key], self.judges[key], self.say
            )

    def show(self, console: Console | None, tie: Tie | None) -> Progress | MatrixProgress:
        """Make the live display, with the attempts carried over from a saved run counted;
        return it to be entered."""
        progress = _display(self.runs, console, tie)
        self.shown.append(progress)
        for key, journal in self.journals.items():
            for record in journal.carried_records:
                progress.attempt_done(key, record)
        return progress.live

    def endings(
        self, execution: Execution, adaptive: Mapping[str, AdaptiveK]
    ) -> dict[str, RunEnding]:
        """Each engine's run assembled and saved; how each ended."""
        endings = {
            key: _finish(key, self.journals[key], run, execution, adaptive.get(key))
            for key, run in self.runs.items()
        }
        if self.controller.killed and not execution.interrupted:
            # the stop came after the last attempt, while the results were being saved:
            # they are whole, and the run still ends as the signal asks
            signal = self.controller.stop_signal
            endings = {
                key: attrs.evolve(e, interrupted=True, stop_signal=signal)
                for key, e in endings.items()
            }
        return endings

    def close(self) -> None:
        """Close every journal opened."""
        for journal in self.journals.values():
            journal.close()


def prepare_engines(options: Mapping[str, RunOptions], host: PluginHost) -> dict[str, PreparedRun]:
    """Every engine's pre-flight checks (:func:`caliper.runner.run.prepare.prepare_run`), all
    before any attempt. With one engine its error is raised as it is; with several, what fails
    is ONE error naming each engine that cannot run (with the worst exit code among them,
    e.g. ``3`` for a missing CLI)."""
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


@attrs_classes.frozen
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


def _display(runs: Mapping[str, PreparedRun], console: Console | None, tie: Tie | None) -> _Display:
    """One engine's task lines, or (a matrix, a baseline) a line per key and task."""
    first = next(iter(runs.values()))
    spec, k = first.spec, first.options.k
    if tie is None and len(runs) == 1:
        from caliper.runner.progress import Progress

        title = f"caliper run {spec.name} ({first.engine.label})"
        one = Progress(spec.tasks, k, console=console, title=title)
        return _Display(
            one,
            attempt_done=lambda _key, record: one.attempt_done(record),
            task_aborted=lambda _key, name: one.task_aborted(name),
        )
    from caliper.runner.matrix_progress import MatrixProgress

    title = tie.title if tie is not None else f"caliper run {spec.name} on {len(runs)} engines"
    many = MatrixProgress(list(runs), spec.tasks, k, console=console, title=title)
    return _Display(many, attempt_done=many.attempt_done, task_aborted=many.task_aborted)


def _notify(shown: list[_Display], text: str) -> None:
    """One line for the user: above the live display once there is one, else on stderr (made
    safe to print as the display's console would)."""
    if shown:
        shown[0].notify(text)
        return

    print(printable(text), file=sys.stderr, flush=True)


def _judge_engine(host: PluginHost, prepared: PreparedRun) -> LazyEngine:
    """One engine's judge engine, made on first use."""
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
    run: _Run,
    settings: RunSettings,
    session: ExecutorSession,
    jobs: list[AttemptJob],
    events: Events,
    adaptive: Mapping[str, AdaptiveK],
    drained: Callable[[], None],
) -> Execution:
    """Schedule ``jobs`` on the executor's ``session``; then ``drained`` (the sandboxes made
    ahead and never used are removed) and end orphaned processes. The sandboxes' background
    deletion goes on: :func:`run_engines` waits for it once the results are saved."""
    try:
        execution = schedule(
            run.runs,
            session,
            jobs,
            controller=run.controller,
            workers=settings.workers,
            events=events,
            adaptive=adaptive,
            budget=settings.max_cost,
        )
    finally:
        drained()
    process.sweep_orphans()
    return execution


def _events(
    journals: Mapping[str, RunJournal], shown: list[_Display], started: Callable[[], None]
) -> Events:
    """Each finished attempt to its engine's journal and to the progress display (both made
    by ``started``, which the scheduler calls before the first attempt is handed back)."""

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
    stop_reason = None
    if execution.interrupted or execution.fatal is not None or execution.budget_stop:
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
        budget_stop=execution.budget_stop,
    )


def _cli_version(prepared: PreparedRun) -> str | None:
    try:
        return prepared.engine.backend.cli_version(prepared.cli_path)
    except Exception:  # a version probe must never break a run
        return None
