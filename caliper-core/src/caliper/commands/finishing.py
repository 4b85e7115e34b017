"""How a finished run leaves the command line, shared by ``caliper run``, ``caliper retry``
and a matrix run (:mod:`caliper.commands.run_matrix`): the report shown safely
(:func:`show_safely`), the bars judged and saved (:func:`judge_bars`), and the exit its
:class:`~caliper.runner.RunEnding` calls for (:func:`exit_for`)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from caliper.commands.gate_options import evaluate, gate_error, record_gate, write_junit_report
from caliper.errors import CaliperError
from caliper.runner.run.ending import RunInterrupted

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from caliper.results.gate import Bar, GateResult
    from caliper.runner import RunEnding


def finish_report(
    report: RunEnding,
    verbose: bool,
    output: Path | None,
    confidence: float,
    bars: tuple[Bar, ...] = (),
    inconclusive: str = "fail",
    junit: Path | None = None,
) -> None:
    """Print a finished run's report and raise the exit its ending calls for (decided by
    :meth:`caliper.runner.RunEnding.problem`; this only maps it to the command line)."""
    if report.never_started and report.fatal is not None:
        raise never_started_error(report.fatal)
    show_safely(
        lambda: _show(report, verbose, output, confidence), [report.saved_to], report.interrupted
    )
    gate = judge_bars(report, bars, inconclusive, confidence, output=output)
    if junit is not None:
        from caliper.report.junit import junit_document

        write_junit_report(junit, junit_document(report.results, gate, confidence))
    exit_for(report.problem(gate_error(gate)))


def never_started_error(fatal: CaliperError) -> CaliperError:
    """``fatal`` (why the agent could not start), said once, with what became of the run."""
    note = "No attempt got started, so nothing was saved."
    return type(fatal)(
        fatal.message,
        hint=f"{fatal.hint}\n{note}" if fatal.hint else note,
        exit_code=fatal.exit_code,
    )


def show_safely(
    render: Callable[[], None], saved: Sequence[Path | None], interrupted: bool
) -> None:
    """Print a finished run's report with ``render``. A rendering bug must not hide where the
    results are: it becomes one error naming the saved files (``saved``). After SIGHUP the
    terminal is gone (``interrupted`` and writing fails): the runs are saved, so the exit goes
    on with the signal's code. Ctrl-C while it is drawn stops it: exit 130, saying where the
    results already are."""
    try:
        try:
            render()
        except KeyboardInterrupt:
            _stopped_while_showing(saved)
        except BrokenPipeError:
            raise
        except Exception as exc:  # the results are already saved; say where instead of crashing
            paths = [str(path) for path in saved if path is not None]
            raise CaliperError(
                f"Showing the report failed ({type(exc).__name__}: {exc}); the results "
                + (f"are saved in {', '.join(paths)}." if paths else "were not saved (see above)."),
                hint=f"Try `caliper report {paths[0]}`, and please report this bug."
                if paths
                else None,
            ) from exc
    except CaliperError as exc:
        if not (interrupted and isinstance(exc.__cause__, OSError)):
            raise


def _stopped_while_showing(saved: Sequence[Path | None]) -> NoReturn:
    """Ctrl-C during the report: the results are saved already, so say where and exit 130."""
    paths = [str(path) for path in saved if path is not None]
    where = f"are saved in {', '.join(paths)}" if paths else "were not saved (see above)"
    with contextlib.suppress(OSError):  # the terminal may be gone
        click.echo(
            f"Error: Interrupted (Ctrl-C) while showing the report; the results {where}.", err=True
        )
    raise click.exceptions.Exit(130)


def judge_bars(
    report: RunEnding,
    bars: tuple[Bar, ...],
    inconclusive: str,
    confidence: float,
    heading: str | None = None,
    output: Path | None = None,
) -> GateResult | None:
    """Judge the bars on a finished run, print them (under ``heading`` when given) and save
    them with it (``meta.gate``, also in the ``--output`` copy); ``None`` when no bar was set
    or a signal stopped the run."""
    if not bars or report.interrupted:
        return None
    from caliper.report import make_console
    from caliper.report.gate_view import render_gate

    gate = evaluate(report.results, bars, inconclusive, confidence)
    console = make_console()
    if heading is not None:
        console.print(heading, soft_wrap=True, markup=False)
    render_gate(gate, console)
    if report.save_error is None:
        record_gate(report.saved_to, gate, output)
        report.results.meta.gate = gate.to_json()
    return gate


def exit_for(problem: CaliperError | None) -> None:
    """Leave the command as ``problem`` (from :meth:`caliper.runner.RunEnding.problem`)
    says: return for none, raise it otherwise. A stop signal's message is printed here, so
    a closed terminal (SIGHUP) cannot turn the signal's exit code into another."""
    if isinstance(problem, RunInterrupted):
        with contextlib.suppress(OSError):  # a closed terminal (SIGHUP) is not an error
            click.echo(f"Error: {problem.message}", err=True)
        raise click.exceptions.Exit(problem.exit_code)
    if problem is not None:
        raise problem


def _show(report: RunEnding, verbose: bool, output: Path | None, confidence: float) -> None:
    """Print the run's report, and where the ``--output`` copy went."""
    from caliper.report import make_console
    from caliper.report.run_view import render_run

    console = make_console()
    render_run(
        report.results, console, verbose=verbose, path=report.saved_to, confidence=confidence
    )
    if output is not None and report.saved_to is not None and report.save_error is None:
        console.print(f"A copy was saved to {output}", soft_wrap=True, markup=False)
