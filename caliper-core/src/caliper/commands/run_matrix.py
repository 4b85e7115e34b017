"""``caliper run SPEC --model A --model B …``: the command side of a matrix run (issue 18).

:func:`split_models` reads the repeatable ``--model`` (one engine: today's run; several: a
matrix, refused with flags that name one run). :func:`run_engines` runs the matrix
(:func:`caliper.runner.matrix.run_matrix`), prints the engines side by side
(:mod:`caliper.report.matrix_view`), judges the bars on each engine's run and exits with the
worst code over the engines.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import click

from caliper.errors import CaliperError, UsageError

if TYPE_CHECKING:
    from caliper.results.gate import Bar
    from caliper.runner.matrix import MatrixEnding
    from caliper.runner.options import RunOptions


def split_models(
    models: tuple[str, ...] | str | None,
    *,
    resume: str | None,
    output: Path | None,
    junit: Path | None,
) -> tuple[str | None, list[str] | None]:
    """``(model, None)`` for zero or one ``--model``; ``(None, engines)`` for several.

    A matrix is refused (exit 2) with ``--resume`` (it continues one run: resume each
    engine's run on its own), ``--output`` and ``--junit`` (each names one file for one run).
    """
    if models is None or isinstance(models, str):
        return models, None
    if len(models) <= 1:
        return (models[0] if models else None), None
    from caliper.runner.matrix import engine_keys

    engines = engine_keys(models)
    for flag, value in (("--resume", resume), ("--output", output), ("--junit", junit)):
        if value is not None:
            raise UsageError(
                f"{flag} cannot be combined with several --model: it names one run, and a "
                "matrix saves one run per engine.",
                hint="Run without it (every engine's run is saved in .caliper/results/), "
                "or give one --model."
                + (" Resume each engine's run on its own." if flag == "--resume" else ""),
            )
    return None, engines


def run_engines(
    options: RunOptions,
    engines: list[str],
    verbose: bool,
    confidence: float,
    bars: tuple[Bar, ...],
    inconclusive: str,
) -> None:
    """Run the matrix, show it, judge bars per engine, and raise the worst exit."""
    from caliper.runner.matrix import run_matrix

    ending = run_matrix([attrs.evolve(options, model=engine) for engine in engines])
    _show(ending, verbose, confidence)
    problems = _problems(ending, bars, inconclusive, confidence)
    if any(report.interrupted for report in ending.reports):
        from caliper.runner.control import signal_label

        report = next(r for r in ending.reports if r.interrupted)
        label = signal_label(report.stop_signal) if report.stop_signal else "Ctrl-C"
        first = "Interrupted" if label == "Ctrl-C" else f"Stopped by {label}"
        with contextlib.suppress(OSError):
            click.echo(
                f"Error: {first}: every engine's finished attempts were saved as a partial run.",
                err=True,
            )
        raise click.exceptions.Exit(ending.exit_code)
    if not problems:
        return
    code = max(error.exit_code for error in problems)
    if len(problems) == 1:
        raise problems[0]
    raise CaliperError(
        "\n".join(error.message for error in problems),
        hint="\n".join(dict.fromkeys(e.hint for e in problems if e.hint)) or None,
        exit_code=code,
    )


def _problems(
    ending: MatrixEnding, bars: tuple[Bar, ...], inconclusive: str, confidence: float
) -> list[CaliperError]:
    """What went wrong, once each: a fatal error, failed saves, all-unusable engines, failed
    bars per engine (each with its own exit code)."""
    from caliper.commands.gate_options import evaluate, raise_if_failed
    from caliper.runner import EXIT_ALL_UNUSABLE

    problems: list[CaliperError] = []
    fatal = next((r.fatal for r in ending.reports if r.fatal is not None), None)
    if fatal is not None:
        problems.append(fatal)
    for engine, report in zip(ending.engines, ending.reports, strict=True):
        if report.save_error is not None:
            problems.append(report.save_error)
        if fatal is None and report.exit_code == EXIT_ALL_UNUSABLE:
            problems.append(
                CaliperError(
                    f"--model {engine}: every attempt was unusable (infra_error, timeout or "
                    "judge_error), so no success rate could be measured.",
                    hint="The reasons are in its report (`caliper report RUN --verbose`).",
                    exit_code=EXIT_ALL_UNUSABLE,
                )
            )
        if bars and fatal is None:
            gate = evaluate(report.results, bars, inconclusive, confidence)
            _render_gate(engine, gate)
            try:
                raise_if_failed(gate)
            except CaliperError as exc:
                problems.append(
                    CaliperError(
                        f"--model {engine}: {exc.message}", hint=exc.hint, exit_code=exc.exit_code
                    )
                )
    return problems


def _render_gate(engine: str, gate) -> None:  # type: ignore[no-untyped-def]
    """The bars of one engine's run, under its name."""
    from caliper.report import make_console
    from caliper.report.gate_view import render_gate

    console = make_console()
    console.print(f"--model {engine}:", soft_wrap=True, markup=False)
    render_gate(gate, console)


def _show(ending: MatrixEnding, verbose: bool, confidence: float) -> None:
    """The engines side by side, where each run was saved, and the matrix id."""
    from caliper.report import make_console
    from caliper.report.matrix_view import render_matrix
    from caliper.results.matrix import build_matrix

    console = make_console()
    if verbose:
        from caliper.report.run_view import render_run

        for report in ending.reports:
            render_run(
                report.results,
                console,
                verbose=True,
                path=report.saved_to,
                confidence=confidence,
            )
    render_matrix(build_matrix([r.results for r in ending.reports], confidence), console)
    for engine, report in zip(ending.engines, ending.reports, strict=True):
        where = report.saved_to or "not saved (see below)"
        console.print(f"{engine}: results saved to {where}", soft_wrap=True, markup=False)
    console.print(
        f"Matrix {ending.matrix_id}: `caliper report --matrix {ending.matrix_id}` shows it again.",
        soft_wrap=True,
        markup=False,
    )
