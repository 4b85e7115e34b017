"""``caliper run SPEC --baseline [NAME …]``: the command side of a baseline run.

:func:`run_and_finish_baseline` runs both arms (:func:`caliper.runner.baseline.run_baseline`)
and :func:`finish_baseline` ends it as ``caliper compare CONTROL FULL`` would: the pair
judged (:func:`caliper.results.baseline.judge_pair`) and shown in the asked ``--format``,
``--junit`` written, and the exit decided in one order: what stopped an arm (as a run's
ending says: the results could not be saved, a fatal error, a signal, every attempt unusable)
→ a supported drop of what ``--fail-on`` names (1: the skill hurts) → ``--require-improvement``
/ ``--min-lift`` / ``--min-score`` failed (3).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import click

from caliper.commands.finishing import exit_for, judge_bars, never_started_error, show_safely
from caliper.commands.gate_options import gate_error, write_junit_report
from caliper.commands.run_matrix import worst
from caliper.errors import CaliperError, UsageError
from caliper.report import make_console
from caliper.report.baseline_view import baseline_markdown, render_baseline
from caliper.report.junit_compare import baseline_junit_document
from caliper.report.run_view import render_run
from caliper.results.baseline import gate_failures, judge_pair, verdict_data
from caliper.runner.baseline import run_baseline
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.report.html.run_data import AttemptDetails
    from caliper.results.baseline import BaselineVerdict
    from caliper.results.gate import Bar
    from caliper.results.models import RunResults
    from caliper.runner.baseline import ArmKey, BaselineEnding
    from caliper.runner.run.options import RunOptions
    from caliper.runner.run.plan import Continuation

EXIT_HURTS = 1
EXIT_GATE = 3
FORMATS = ("text", "json", "markdown", "html")


class SkillHurts(CaliperError):
    """A supported drop with the skill in (of what ``--fail-on`` names): exit 1."""

    exit_code = EXIT_HURTS


class LiftGateFailed(CaliperError):
    """``--require-improvement`` or ``--min-lift`` failed: exit 3."""

    exit_code = EXIT_GATE


@attrs_classes.frozen
class BaselineRequest:
    """What ``caliper run --baseline`` was asked beyond the run itself."""

    names: tuple[str, ...] = ()
    require_improvement: bool = False
    min_lift: float | None = None
    fail_on: str = "score"
    output_format: str = "text"
    page: Path | None = None
    junit: Path | None = None
    verbose: bool = False
    confidence: float = 0.95
    bars: tuple[Bar, ...] = ()
    inconclusive: str = "fail"
    explain: bool = False


def check_request(request: BaselineRequest, engines: int, output: Path | None) -> None:
    """Refuse (exit 2) what a baseline cannot do, before any attempt."""
    if output is not None:
        raise UsageError(
            "--output cannot be combined with --baseline: it names one run, and a baseline "
            "saves two (one per arm).",
            hint="Run without it (both arms are saved in .caliper/results/).",
        )
    if request.junit is not None and engines > 1:
        raise UsageError(
            "--junit with --baseline and several --model: the report holds one pair.",
            hint="Run one --model per job, or drop --junit.",
        )
    if request.page is not None and request.output_format != "html":
        raise UsageError("--page is for --format html.", hint="Add --format html.")
    if request.output_format == "html" and engines > 1 and request.page is None:
        raise UsageError(
            "--format html with several --model needs --page FILE (one page per engine: "
            "FILE gets the engine's name before its suffix).",
        )


def run_and_finish_baseline(
    options: RunOptions,
    engines: list[str] | None,
    request: BaselineRequest,
    *,
    continuations: Mapping[ArmKey, Continuation] | None = None,
    baseline_id: str | None = None,
    seed: int | None = None,
) -> None:
    """Run the baseline (one pair per engine) and leave as :func:`finish_baseline` says."""
    many = [attrs.evolve(options, model=engine) for engine in engines] if engines else [options]
    ending = run_baseline(
        many,
        request.names,
        continuations=continuations,
        baseline_id=baseline_id,
        seed=seed,
        lift_bar=request.min_lift if request.min_lift is not None else 0.0,
    )
    finish_baseline(ending, request)


@attrs_classes.frozen
class ShownPair:
    """One engine's judged pair, with both arms' results and the lift gate's failures."""

    verdict: BaselineVerdict
    control: RunResults
    full: RunResults
    gate: list[str]


def finish_baseline(ending: BaselineEnding, request: BaselineRequest) -> None:
    """Show the finished pairs and raise the exit they call for (see the module's doc)."""
    for arm in ending.endings:
        if arm.never_started and arm.fatal is not None:
            raise never_started_error(arm.fatal)
    pairs = [_judged(ending, i, request) for i in range(len(ending.engines))]
    show_safely(
        lambda: _show(ending, pairs, request),
        [arm.saved_to for arm in ending.endings],
        any(arm.interrupted for arm in ending.endings),
    )
    write_junit(request, pairs)
    stopped = [p for p in (arm.problem() for arm in ending.endings) if p is not None]
    if stopped:
        exit_for(worst(stopped))
    problems = pair_problems(pairs, request)
    problems += _bar_problems(ending, request)
    exit_for(worst(problems))


def pair_problems(pairs: list[ShownPair], request: BaselineRequest) -> list[CaliperError]:
    """Each pair's problem (:func:`_pair_problem`), engines named when there are several."""
    named = len(pairs) > 1
    found = [_pair_problem(p.verdict, p.gate, request, named) for p in pairs]
    return [p for p in found if p is not None]


def judged_pair(
    control: RunResults,
    full: RunResults,
    request: BaselineRequest,
    *,
    engine: str = "",
    control_path: Path | None = None,
    full_path: Path | None = None,
) -> ShownPair:
    """``control`` → ``full`` judged (:func:`caliper.results.baseline.judge_pair`), with the
    lift gate's failures."""
    verdict = judge_pair(
        control,
        full,
        engine=engine,
        confidence=request.confidence,
        control_path=str(control_path) if control_path else None,
        full_path=str(full_path) if full_path else None,
    )
    return ShownPair(verdict, control, full, _gate(verdict, request))


def _judged(ending: BaselineEnding, index: int, request: BaselineRequest) -> ShownPair:
    control, full = ending.control[index], ending.full[index]
    return judged_pair(
        control.results,
        full.results,
        request,
        engine=ending.engines[index],
        control_path=control.saved_to,
        full_path=full.saved_to,
    )


def _gate(verdict: BaselineVerdict, request: BaselineRequest) -> list[str]:
    """The lift gate's failures (empty when passed, not asked, or the pair is not judged)."""
    if not verdict.comparison.comparable:
        return []
    return gate_failures(
        verdict, require_improvement=request.require_improvement, min_lift=request.min_lift
    )


def _pair_problem(
    verdict: BaselineVerdict, gate: list[str], request: BaselineRequest, named: bool
) -> CaliperError | None:
    """The exit one engine's pair calls for: a shard's pair is judged after ``merge``; a
    supported drop of what ``--fail-on`` names exits 1; a failed lift gate 3."""
    comparison = verdict.comparison
    where = f"--model {verdict.engine}: " if named else ""
    if not comparison.comparable:
        return None  # a shard (or a stop): the partial pair is shown, not judged
    hurt = []
    if request.fail_on in ("score", "both") and comparison.has_regression:
        hurt.append("success score")
    if request.fail_on in ("activation", "both") and comparison.has_activation_regression:
        hurt.append("activation")
    level = f"{comparison.confidence * 100:g}%"
    if hurt:
        return SkillHurts(
            f"{where}with {', '.join(verdict.left_out)} the {' and '.join(hurt)} dropped by "
            f"more than noise explains (at {level}, family-wise corrected).",
            hint="The per-task rows above say where; `caliper compare --baseline ID --explain` "
            "shows every test.",
        )
    if gate:
        return LiftGateFailed(where + "; ".join(gate) + ".")
    return None


def _bar_problems(ending: BaselineEnding, request: BaselineRequest) -> list[CaliperError]:
    """``--min-score``/``--min-activation`` bars, judged on each engine's full arm."""
    if not request.bars:
        return []
    found = []
    for engine, full in zip(ending.engines, ending.full, strict=True):
        heading = f"Bars on the full arm{f' (--model {engine})' if engine else ''}:"
        gate = judge_bars(full, request.bars, request.inconclusive, request.confidence, heading)
        error = gate_error(gate)
        if error is not None:
            found.append(error)
    return found


def _show(ending: BaselineEnding, pairs: list[ShownPair], request: BaselineRequest) -> None:
    """The pairs in the asked format, then where the runs were saved (on stderr when stdout
    carries json, markdown or html)."""
    show_pairs(pairs, request, ending.baseline_id, ending.seed)
    _saved_lines(ending, make_console(stderr=request.output_format != "text"))


def show_pairs(
    pairs: list[ShownPair], request: BaselineRequest, baseline_id: str, seed: int | None
) -> None:
    """Each engine's pair in ``request.output_format`` (text, json, markdown or html)."""
    fmt = request.output_format
    if fmt == "json":
        data = {
            "baseline_id": baseline_id,
            "seed": seed,
            "pairs": [dict(verdict_data(p.verdict), gate_failures=p.gate) for p in pairs],
        }
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    elif fmt == "markdown":
        click.echo("\n".join(baseline_markdown(p.verdict, p.gate) for p in pairs), nl=False)
    elif fmt == "html":
        _pages(pairs, request)
    else:
        _text(pairs, request, make_console())


def _text(pairs: list[ShownPair], request: BaselineRequest, console) -> None:
    if request.verbose:
        for pair in pairs:
            for results in (pair.control, pair.full):
                render_run(results, console, verbose=True)
    for pair in pairs:
        render_baseline(
            pair.verdict,
            pair.control,
            pair.full,
            console,
            gate=pair.gate,
            explain=request.explain,
        )


def _pages(pairs: list[ShownPair], request: BaselineRequest) -> None:
    """Each pair's page at ``request.page`` (one file per engine when there are several), with
    both arms' own report pages beside it; stdout without a file."""
    from caliper.report.html import baseline_page
    from caliper.report.html.output import emit_with_run_pages

    for pair in pairs:
        target = request.page
        if target is not None and len(pairs) > 1:
            name = pair.verdict.engine.replace(":", "-").replace("/", "-") or "default"
            target = target.with_name(f"{target.stem}-{name}{target.suffix}")

        def page_for(
            links: tuple[str | None, ...], details: AttemptDetails, pair: ShownPair = pair
        ) -> str:
            control, full = links
            return baseline_page(
                pair.control,
                pair.full,
                pair.verdict,
                pair.gate,
                pages=(control, full),
                details=details,
            )

        arms = [pair.control, pair.full]
        emit_with_run_pages(arms, target, pair.verdict.comparison.confidence, page_for)


def _saved_lines(ending: BaselineEnding, console) -> None:
    for engine, control, full in zip(ending.engines, ending.control, ending.full, strict=True):
        prefix = f"{engine}: " if len(ending.engines) > 1 else ""
        for label, arm in (("control", control), ("full", full)):
            where = arm.saved_to or "not saved (see below)"
            console.print(f"{prefix}{label} arm saved to {where}", soft_wrap=True, markup=False)
    console.print(
        f"Baseline {ending.baseline_id}: `caliper compare --baseline {ending.baseline_id}` "
        "shows it again.",
        soft_wrap=True,
        markup=False,
    )


def write_junit(request: BaselineRequest, pairs: list[ShownPair]) -> None:
    """``--junit PATH``: the first (only) pair as JUnit XML."""
    if request.junit is None or not pairs:
        return

    pair = pairs[0]
    write_junit_report(
        request.junit, baseline_junit_document(pair.verdict, pair.gate, fail_on=request.fail_on)
    )
