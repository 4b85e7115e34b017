"""``caliper report``: show a saved run again, as text or as JSON with derived scores."""

from __future__ import annotations

import json
from pathlib import Path

import click

from caliper.commands.confidence import DEFAULT_CONFIDENCE, confidence_option


def report_data(results, path: Path, confidence: float = DEFAULT_CONFIDENCE) -> dict:
    """The JSON of ``caliper report --format json``: the saved run plus derived blocks
    (intervals at ``confidence``)."""
    from caliper.results import codec
    from caliper.results.scoring import score_run, scores_data, usage_data

    run = score_run(results, confidence)
    data = codec.to_data(results)
    data["path"] = str(path)
    data["scores"] = scores_data(run)
    data["usage_totals"] = usage_data(run)
    return data


@click.command(name="report")
@click.argument("ref", required=False)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: the same report `caliper run` prints; json: the saved run plus derived "
    "`scores` and `usage_totals` blocks.",
)
@click.option("-v", "--verbose", is_flag=True, help="Add pass@k / pass^k and a panel per task.")
@confidence_option
def command(ref: str | None, output_format: str, verbose: bool, confidence: float) -> None:
    """Show a saved run again.

    REF is a results JSON file, a spec file (its latest run) or a spec name (its latest run
    under the nearest .caliper/ folder). Without REF, the most recent run of any spec.

    \b
    Examples:
      caliper report                          # the most recent run
      caliper report my-skill                 # my-skill's latest run
      caliper report .caliper/results/my-skill/2026-11-30T18-01-33Z.json -v
      caliper report my-skill --format json | jq .scores

    \b
    Exit codes:
      0  the report was shown
      2  REF matches no saved run, or the file is not a readable results file
    """
    from caliper.results.store import ResultsError, caliper_root, latest_run, load_run

    cwd = Path.cwd()
    if ref is None:
        root = caliper_root(cwd, None)
        entry = latest_run(root)
        if entry is None:
            raise ResultsError(
                f"There are no saved runs under {root / 'results'}.",
                hint="Run `caliper run SPEC` first.",
            )
        path = entry.path
    else:
        from caliper.results.store import resolve_run_ref

        path = resolve_run_ref(ref, cwd=cwd)
    # the text report never shows a turn: read a summary; the JSON holds the whole run
    results = load_run(path, transcripts=output_format == "json")
    if output_format == "json":
        click.echo(json.dumps(report_data(results, path, confidence), indent=2, ensure_ascii=False))
        return
    from caliper.report import make_console
    from caliper.report.run_view import render_run

    render_run(
        results,
        make_console(),
        verbose=verbose,
        path=_shown_path(path, cwd),
        confidence=confidence,
    )


def _shown_path(path: Path, cwd: Path) -> Path:
    try:
        return path.resolve().relative_to(cwd.resolve())
    except ValueError:
        return path
