"""``caliper run SPEC --model A --model B …``: the command side of a matrix run.

:func:`split_models` reads the repeatable ``--model`` (one engine: today's run; several: a
matrix, refused with flags that name one run). :func:`run_and_finish_matrix` runs the
matrix (:func:`caliper.runner.matrix.run_matrix`); :func:`finish_matrix` prints the engines
side by side (:mod:`caliper.report.matrix_view`) and goes the same way as one run's
:func:`caliper.commands.finishing.finish_report` for each engine (report shown safely, bars judged,
exit decided by :meth:`caliper.runner.RunEnding.problem`), leaving with the worst code over
the engines.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from caliper.commands.finishing import exit_for, judge_bars, never_started_error, show_safely
from caliper.commands.gate_options import gate_error
from caliper.errors import CaliperError, UsageError
from caliper.runner.run.ending import AllUnusable, RunInterrupted

if TYPE_CHECKING:
    from caliper.results.gate import Bar
    from caliper.runner.matrix import MatrixEnding
    from caliper.runner.run.ending import RunEnding
    from caliper.runner.run.options import RunOptions


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


def run_and_finish_matrix(
    options: RunOptions,
    engines: list[str],
    verbose: bool,
    confidence: float,
    bars: tuple[Bar, ...],
    inconclusive: str,
) -> None:
    """Run the matrix (one engine per ``--model``), show it, judge the bars per engine, and
    leave with the worst exit over the engines."""
    from caliper.runner.matrix import run_matrix

    ending = run_matrix([attrs.evolve(options, model=engine) for engine in engines])
    finish_matrix(ending, verbose, confidence, bars, inconclusive)


def finish_matrix(
    ending: MatrixEnding,
    verbose: bool,
    confidence: float,
    bars: tuple[Bar, ...] = (),
    inconclusive: str = "fail",
) -> None:
    """Print a finished matrix and raise the exit its engines' endings call for: the path of
    one run (:func:`caliper.commands.finishing.finish_report`) for each engine, each engine's exit
    decided by :meth:`caliper.runner.RunEnding.problem`, the matrix leaving with every
    engine's problem named once and the worst (highest) exit code."""
    show_safely(
        lambda: _show(ending, verbose, confidence),
        [report.saved_to for report in ending.reports],
        any(report.interrupted for report in ending.reports),
    )
    problems = []
    for engine, report in zip(ending.engines, ending.reports, strict=True):
        gate = judge_bars(report, bars, inconclusive, confidence, heading=f"--model {engine}:")
        problem = report.problem(gate_error(gate))
        if problem is not None:
            said = _engine_problem(engine, report, problem)
            if report.never_started and problem is report.fatal:
                said = never_started_error(said)
            problems.append(said)
    exit_for(worst(problems))


def _engine_problem(engine: str, report: RunEnding, problem: CaliperError) -> CaliperError:
    """``problem`` as the matrix says it: what stopped the whole matrix (a fatal error, a
    signal) as it is; what is about one engine's run named by its ``--model``."""
    if problem is report.fatal or isinstance(problem, RunInterrupted):
        return problem
    if isinstance(problem, AllUnusable):
        where = report.saved_to or "RUN"
        return AllUnusable(
            f"--model {engine}: every attempt was unusable (infra_error, timeout or "
            "judge_error), so no success rate could be measured.",
            hint=f"The reasons are in its report (`caliper report {where} --verbose`).",
            exit_code=problem.exit_code,
        )
    return CaliperError(
        f"--model {engine}: {problem.message}", hint=problem.hint, exit_code=problem.exit_code
    )


def worst(problems: list[CaliperError]) -> CaliperError | None:
    """One error for the matrix: each distinct problem once (the engines share a fatal error
    or a signal), with the highest exit code; a signal's kind is kept, so the exit goes on
    with its code even when the terminal is gone."""
    distinct = list({problem.message: problem for problem in problems}.values())
    if len(distinct) <= 1:
        return distinct[0] if distinct else None
    kind = RunInterrupted if any(isinstance(p, RunInterrupted) for p in distinct) else CaliperError
    return kind(
        "\n".join(problem.message for problem in distinct),
        hint="\n".join(dict.fromkeys(p.hint for p in distinct if p.hint)) or None,
        exit_code=max(problem.exit_code for problem in distinct),
    )


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
        if report.never_started:
            line = f"{engine}: not saved (no attempt got started, see below)"
        else:
            line = f"{engine}: results saved to {report.saved_to or 'not saved (see below)'}"
        console.print(line, soft_wrap=True, markup=False)
    console.print(
        f"Matrix {ending.matrix_id}: `caliper report --matrix {ending.matrix_id}` shows it again.",
        soft_wrap=True,
        markup=False,
    )
