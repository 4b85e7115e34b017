"""The runner: from a spec file to a saved run (``caliper run``).

``run_spec`` does the pre-flight checks (:mod:`.prepare`), schedules every attempt
(:mod:`.execute`), each in its own sandbox (:mod:`.attempt`), and saves the results.
See ``docs/architecture.md`` for which module owns each step.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from caliper.errors import CaliperError
from caliper.results.models import RunResults, TaskResult
from caliper.runner.options import RunOptions

if TYPE_CHECKING:
    from rich.console import Console

    from caliper.plugins import PluginHost
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
) -> RunReport:
    """Run ``options.spec_path`` and save the results; see :class:`RunReport` for exit codes.

    Raises :class:`CaliperError` subclasses for problems found before the first attempt.
    """
    from caliper import process
    from caliper.cli_versions import version_in_background
    from caliper.engine import resolve_engine
    from caliper.plugins import PluginHost
    from caliper.results.compact import StorageLimits
    from caliper.results.store import ResultsWriteError, save_run
    from caliper.runner.control import RunController
    from caliper.runner.execute import execute
    from caliper.runner.judging import LazyEngine
    from caliper.runner.meta import build_meta, new_run_id, now_iso
    from caliper.runner.prepare import prepare_run
    from caliper.runner.progress import Progress
    from caliper.sandbox import finish_removals

    host = host or PluginHost()
    prepared = prepare_run(options, host)
    output = options.output.absolute() if options.output is not None else None
    run_id, started_at = new_run_id(), now_iso()
    cli_version = version_in_background(lambda: _cli_version(prepared))
    judge_engine = LazyEngine(
        lambda: resolve_engine(host, options.judge_model, flag="--judge-model")
    )
    progress = Progress(
        prepared.spec.tasks,
        options.k,
        console=progress_console,
        title=f"caliper run {prepared.spec.name} ({prepared.engine.label})",
    )
    controller = RunController(notify=lambda text: _notify(progress, text))
    process.reset_stop()
    process.adopt_orphans()
    controller.install_signals()
    try:
        with progress:
            execution = execute(prepared, controller, progress, judge_engine)
        process.sweep_orphans()
        finish_removals()  # the sandboxes, deleted in the background
        all_records = [r for rs in execution.records.values() for r in rs]
        meta = build_meta(
            prepared,
            all_records,
            run_id=run_id,
            started_at=started_at,
            judge_engine=judge_engine,
            cli_version=cli_version(),
        )
        if execution.interrupted or execution.fatal is not None:
            meta.partial = True
            meta.stop_reason = prepared.secrets.redact(execution.stop_reason)
        tasks = [
            TaskResult(
                name=task.name,
                index=task.index,
                k=options.k,
                attempts=execution.records[task.name],
                activation_expected=task.activates,
                check_keys=list(task.checks),
                aborted=task.name in execution.aborted,
            )
            for task in prepared.spec.tasks
        ]
        results = RunResults(meta=meta, tasks=tasks)
        saved_to: Path | None = None
        save_error: CaliperError | None = None
        try:
            saved_to = save_run(
                results,
                spec_path=prepared.spec.path,
                output=output,
                root=prepared.results_root,
                limits=StorageLimits(options.max_turn_chars, options.max_attempt_chars),
            )
        except ResultsWriteError as exc:  # shown after the report, which is still printed
            save_error = exc
    finally:
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


def _notify(progress: Progress, text: str) -> None:
    """One line for the user on stderr, above the live progress when it is shown."""
    progress.console.print(text, markup=False, highlight=False, soft_wrap=True)
