"""``caliper compare``: diff two saved runs task by task; exit 1 on a regression."""

from __future__ import annotations

import json
from pathlib import Path

import click

from caliper.errors import CaliperError

EXIT_REGRESSION = 1


class RegressionFound(CaliperError):
    """At least one task scored lower after than before (exit 1, for CI gates)."""

    exit_code = EXIT_REGRESSION


@click.command(name="compare")
@click.argument("before")
@click.argument("after")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "html"]),
    default="text",
    show_default=True,
    help="text: a before → after table; json: the full comparison for scripts; html: a "
    "self-contained page (to stdout, or to -o FILE).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --format html: write the page to FILE instead of stdout.",
)
def command(before: str, after: str, output_format: str, output: Path | None) -> None:
    """Diff two saved runs of the same spec, task by task (BEFORE → AFTER).

    Each of BEFORE and AFTER is a results JSON file, a spec file or a spec name (the spec's
    latest run). Tasks are matched by name; Δ is after − before. A task is a regression when
    its success rate dropped and both sides had usable attempts. Token, wall-time and
    activation changes are shown but never count as a regression.

    \b
    Examples:
      caliper compare RUN-A.json RUN-B.json
      caliper list my-skill          # find the ablated (control) run's file
      caliper compare CONTROL.json my-skill --format json
      caliper compare RUN-A.json RUN-B.json --format html -o compare.html

    \b
    Exit codes:
      0  no task regressed
      1  at least one task regressed
      2  usage error: a run was not found or not readable, or both sides are the same run,
         or -o FILE cannot be written
    """
    from caliper.errors import UsageError
    from caliper.results.compare import compare_runs, comparison_data, same_run
    from caliper.results.store import load_run, resolve_run_ref

    if output is not None and output_format != "html":
        raise UsageError("-o/--output is for --format html.", hint="Add --format html.")
    cwd = Path.cwd()
    a_path = resolve_run_ref(before, cwd=cwd)
    b_path = resolve_run_ref(after, cwd=cwd)
    if a_path.resolve() == b_path.resolve():
        raise UsageError(
            f"Both sides are the same run ({a_path}).",
            hint="Name two different runs: `caliper list SPEC` shows their results files.",
        )
    a, b = load_run(a_path), load_run(b_path)
    if same_run(a, b):
        raise UsageError(
            f"{a_path} and {b_path} hold the same run ({a.meta.spec_name} {a.meta.run_id}).",
            hint="Name two different runs: `caliper list SPEC` shows their results files.",
        )
    comparison = compare_runs(a, b, a_path=str(a_path), b_path=str(b_path))
    if output_format == "html":
        from caliper.report.html import compare_page
        from caliper.report.html.output import emit_page

        emit_page(compare_page(a, b, comparison), output)
    elif output_format == "json":
        click.echo(json.dumps(comparison_data(comparison), indent=2, ensure_ascii=False))
    else:
        from caliper.report import make_console
        from caliper.report.compare_view import render_compare

        render_compare(comparison, make_console())
    if comparison.has_regression:
        names = [t.name for t in comparison.tasks if t.regression]
        raise RegressionFound(
            f"Regression: {len(names)} task(s) scored lower after than before: {', '.join(names)}."
        )
