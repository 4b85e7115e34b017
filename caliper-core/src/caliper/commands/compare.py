"""``caliper compare``: diff two saved runs task by task, telling a real change from noise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from caliper.commands.confidence import confidence_option
from caliper.commands.gate_options import (
    fail_on_option,
    junit_option,
    lift_gate_options,
    write_junit_report,
)
from caliper.commands.output_options import format_option, matrix_option, output_file_option
from caliper.errors import CaliperError, UsageError
from caliper.report import make_console
from caliper.report.compare_view import render_compare
from caliper.results.codec import kept_until_exit
from caliper.results.compare import NEVER_STARTED, compare_runs, comparison_data, same_run
from caliper.results.store import load_run, resolve_run_ref

if TYPE_CHECKING:
    from caliper.results.compare import RunComparison

EXIT_REGRESSION = 1
EXIT_NOT_COMPARABLE = 2


class RegressionFound(CaliperError):
    """A statistically supported drop (exit 1, for CI gates)."""

    exit_code = EXIT_REGRESSION


class NotComparable(CaliperError):
    """A side is partial and ``--allow-partial`` was not given, or a side never started
    (exit 2)."""

    exit_code = EXIT_NOT_COMPARABLE


@click.command(name="compare")
@click.argument("before", required=False)
@click.argument("after", required=False)
@matrix_option(
    "Instead of BEFORE and AFTER: the runs of a matrix (`caliper run SPEC --model A "
    "--model B`), engines side by side per task, every pair tested (Holm-corrected); "
    "with --format html, the `caliper report --matrix ID --format html` page."
)
@format_option(
    "text: a before → after table; json: the full comparison for scripts; markdown: "
    "a summary table for $GITHUB_STEP_SUMMARY; html: a self-contained page (to stdout, or "
    "to -o FILE)."
)
@output_file_option(
    "With --format html: write the page to FILE instead of stdout. Each run's own report "
    "page (for --baseline, each arm's) is written beside it, in a folder named after FILE (-o "
    "site/compare.html: site/compare.runs/<run-id>.html), and linked from the page's header."
)
@confidence_option
@fail_on_option(
    "Which supported regression exits 1: of the success score, of activation, or of either."
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Compare even when a side is partial (stopped early); without it such a pair is "
    "'not comparable' (exit 2). A side that never started has nothing to compare (exit 2 "
    "even with this flag).",
)
@click.option(
    "--explain",
    is_flag=True,
    help="Show every test (p before and after Holm's correction) and what the pair could "
    "detect: the smallest drop at this k and the k a drop would need.",
)
@click.option(
    "--baseline",
    "baseline_id",
    metavar="ID",
    default=None,
    help="Instead of BEFORE and AFTER: the pair of `caliper run SPEC --baseline` (its id is "
    "printed at the end of the run), judged as that run's end judged it: helps / hurts / no "
    "detectable difference.",
)
@lift_gate_options(
    "With --baseline: exit 3 unless the skill's lift is statistically supported.",
    "With --baseline: exit 3 unless the lift's interval lies wholly above D (a fraction).",
)
@junit_option
def command(
    before: str | None,
    after: str | None,
    matrix_id: str | None,
    baseline_id: str | None,
    require_improvement: bool,
    min_lift: float | None,
    output_format: str,
    confidence: float,
    fail_on: str,
    allow_partial: bool,
    explain: bool,
    junit: Path | None,
    output: Path | None,
) -> None:
    """Diff two saved runs of the same spec, task by task (BEFORE → AFTER).

    Each of BEFORE and AFTER is a results JSON file, a spec file or a spec name (the spec's
    latest run). Tasks are matched by name; Δ is after − before, in percentage points, with
    its interval. A change counts only when a test supports it at the level (default 95%):
    a stratified test paired by task for the whole run, at the full level, and only when it
    rejects Fisher's exact test per task, Holm-corrected over the tasks. A task is regressed
    only when its drop is supported; any other drop is shown as "not significant". Token and
    wall-time changes are shown, never tested.
    The footer says how small a drop the pair could have detected.

    \b
    Examples:
      caliper compare RUN-A.json RUN-B.json
      caliper list my-skill          # find the ablated (control) run's file
      caliper compare CONTROL.json my-skill --explain
      caliper compare BASE.json my-skill --fail-on both --format json
      caliper compare BASE.json my-skill --junit compare.xml --format markdown
      caliper compare RUN-A.json RUN-B.json --format html -o compare.html
                     # also writes compare.runs/<run-id>.html: each run's own page
      caliper compare --matrix 2026-12-01T10-00-00Z-1a2b3c   # every engine pair
      caliper compare --baseline 2026-12-01T10-00-00Z-4d5e6f --require-improvement

    \b
    Exit codes:
      0  no statistically supported regression (of what --fail-on names)
      1  a supported regression: of the success score (default), of activation
         with --fail-on activation, of either with --fail-on both
      2  usage error: a run was not found or not readable, both sides are the
         same run, a bad --confidence, an -o FILE that cannot be written; or the
         runs are not comparable (a side is partial and --allow-partial was
         not given, or a side never started: nothing to compare, whatever
         the flags); --matrix ID matches no run
      1  also: the --junit report could not be written
      3  with --baseline: --require-improvement or --min-lift failed
    """
    if baseline_id is not None:  # a baseline pair
        if before is not None or matrix_id is not None:
            raise UsageError(
                "--baseline takes no BEFORE/AFTER or --matrix.",
                hint="`caliper compare --baseline ID` finds the pair's runs itself.",
            )
        if output is not None and output_format != "html":
            raise UsageError("-o/--output is for --format html.", hint="Add --format html.")
        from caliper.commands.compare_baseline import compare_baseline
        from caliper.commands.run_baseline import BaselineRequest

        request = BaselineRequest(
            require_improvement=require_improvement,
            min_lift=min_lift,
            fail_on=fail_on,
            output_format=output_format,
            page=output,
            junit=junit,
            confidence=confidence,
            explain=explain,
        )
        compare_baseline(baseline_id, request, allow_partial=allow_partial)
        return
    if require_improvement or min_lift is not None:
        raise UsageError(
            "--require-improvement and --min-lift apply to a baseline pair.",
            hint="Use `caliper compare --baseline ID`, or `caliper compare BEFORE AFTER "
            "--fail-on ...` for two runs.",
        )
    if matrix_id is not None:  # engines side by side
        if before is not None or junit is not None:
            raise UsageError(
                "--matrix takes no BEFORE/AFTER or --junit.",
                hint="`caliper compare --matrix ID` finds the matrix's runs itself.",
            )
        if output is not None and output_format != "html":
            raise UsageError("-o/--output is for --format html.", hint="Add --format html.")
        from caliper.commands.matrix_report import show_matrix

        show_matrix(matrix_id, (), output_format, confidence, output)
        return
    if before is None or after is None:
        raise UsageError(
            f"Missing argument {'BEFORE' if before is None else 'AFTER'}.",
            hint="Try `caliper compare BEFORE AFTER` or `caliper compare --matrix ID`.",
        )
    if output is not None and output_format != "html":
        raise UsageError("-o/--output is for --format html.", hint="Add --format html.")
    a, b, a_path, b_path = _load_pair(before, after, transcripts=output_format == "html")
    comparison = compare_runs(a, b, a_path=str(a_path), b_path=str(b_path), confidence=confidence)
    _print(comparison, a, b, output_format, output, confidence, explain, allow_partial)
    _write_junit(junit, comparison, fail_on)
    _check_never_started(comparison)
    if not comparison.comparable and not allow_partial:
        raise NotComparable(_not_comparable_message(comparison), hint=_hint(comparison))
    _check_regressions(comparison, fail_on)


def _load_pair(before: str, after: str, *, transcripts: bool = False):
    """The two runs BEFORE and AFTER name and their files (with their transcripts when
    ``transcripts``: the html page's viewer and run pages show them; else a summary); a
    usage error when they are the same run."""
    cwd = Path.cwd()
    a_path = resolve_run_ref(before, cwd=cwd)
    b_path = resolve_run_ref(after, cwd=cwd)
    if a_path.resolve() == b_path.resolve():
        raise UsageError(
            f"Both sides are the same run ({a_path}).",
            hint="Name two different runs: `caliper list SPEC` shows their results files.",
        )
    with kept_until_exit():
        a = load_run(a_path, transcripts=transcripts)
        b = load_run(b_path, transcripts=transcripts)
    if same_run(a, b):
        raise UsageError(
            f"{a_path} and {b_path} hold the same run ({a.meta.spec_name} {a.meta.run_id}).",
            hint="Name two different runs: `caliper list SPEC` shows their results files.",
        )
    return a, b, a_path, b_path


def _print(
    comparison: RunComparison,
    a,
    b,
    output_format: str,
    output: Path | None,
    confidence: float,
    explain: bool,
    allow_partial: bool,
) -> None:
    """Show the comparison in ``output_format`` (html to ``output`` or stdout)."""
    if output_format == "html":
        from caliper.report.html.output import emit_compare

        emit_compare(a, b, comparison, output, confidence)
    elif output_format == "json":
        click.echo(json.dumps(comparison_data(comparison), indent=2, ensure_ascii=False))
    elif output_format == "markdown":
        from caliper.report.markdown_compare import compare_markdown

        click.echo(compare_markdown(comparison), nl=False)
    else:
        render_compare(comparison, make_console(), explain=explain, allow_partial=allow_partial)


def _check_never_started(comparison: RunComparison) -> None:
    """Not comparable (exit 2) when a side never started, whatever ``--allow-partial`` says:
    there is nothing on that side."""
    never = [
        f"the {label} run {run_id}"
        for label, run_id, side in (
            ("before", comparison.a_run_id, comparison.a_side),
            ("after", comparison.b_run_id, comparison.b_side),
        )
        if side.state == NEVER_STARTED
    ]
    if never:
        raise NotComparable(
            f"Nothing to compare: {' and '.join(never)} never started, so "
            f"{'it has' if len(never) == 1 else 'they have'} no attempt to compare"
            + (f" ({_never_reason(comparison)})." if _never_reason(comparison) else "."),
            hint="Fix what stopped it (the reason above), run the spec again, and compare "
            "that run (`caliper list SPEC` shows the runs).",
        )


def _write_junit(junit: Path | None, comparison: RunComparison, fail_on: str) -> None:
    """``--junit PATH``: one test case per task with its regression verdict."""
    if junit is None:
        return
    from caliper.report.junit_compare import compare_junit_document

    write_junit_report(junit, compare_junit_document(comparison, fail_on=fail_on))


def _not_comparable_message(comparison) -> str:
    parts = []
    for label, run_id, side in (
        ("before", comparison.a_run_id, comparison.a_side),
        ("after", comparison.b_run_id, comparison.b_side),
    ):
        if not side.complete:
            reason = f" ({side.reason.rstrip('. ')})" if side.reason else ""
            parts.append(f"the {label} run {run_id} {side.phrase}{reason}")
    return "Not comparable: " + "; ".join(parts) + "."


def _never_reason(comparison) -> str:
    for side in (comparison.a_side, comparison.b_side):
        if side.state == NEVER_STARTED and side.reason:
            return side.reason.rstrip(". ")
    return ""


def _hint(comparison) -> str:
    return (
        "Re-run the spec to get a complete run (`caliper list SPEC` shows which runs are "
        "partial), or pass --allow-partial to compare what finished."
    )


def _check_regressions(comparison, fail_on: str) -> None:
    reasons = []
    if fail_on in ("score", "both") and comparison.has_regression:
        names = [t.name for t in comparison.tasks if t.regression]
        if names:
            reasons.append(
                f"{len(names)} task(s) dropped by more than noise explains: {', '.join(names)}"
            )
        if comparison.overall_regression and comparison.matched_measured > 1:
            reasons.append("the whole run's score dropped by more than noise explains")
    if fail_on in ("activation", "both") and comparison.has_activation_regression:
        names = [t.name for t in comparison.tasks if t.activation_regression]
        what = f" in {', '.join(names)}" if names else " over the run"
        reasons.append(f"activation dropped{what} by more than noise explains")
    if reasons:
        level = f"{comparison.confidence * 100:g}%"
        raise RegressionFound(
            f"Regression (at {level}, family-wise corrected): " + "; ".join(reasons) + "."
        )
