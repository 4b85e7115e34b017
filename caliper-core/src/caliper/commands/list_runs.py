"""``caliper list``: the specs with saved runs, or one spec's runs."""

from __future__ import annotations

import json
from pathlib import Path

import click

from caliper.errors import UsageError
from caliper.results.store import SPEC_SUFFIXES, ResultsError, caliper_root, list_runs, load_run
from caliper.spec.names import spec_name_for


def run_row(entry) -> dict:
    """One run as ``caliper list SPEC`` shows it (an unreadable file gets an ``error``): the
    score comes with the interval ``caliper report`` shows (95 %, ``score_interval``). A saved
    run's row is read from the summary saved beside it (:mod:`caliper.results.run_summary`);
    a run without one is decoded and scored once and its summary saved."""
    from caliper.results.run_summary import read_summary, summarize, write_summary

    row: dict = {"run_id": entry.run_id, "path": str(entry.path)}
    saved = read_summary(entry.path)
    if saved is not None:
        row.update(saved)
        return row
    try:
        results = load_run(entry.path, transcripts=False)
    except ResultsError as exc:
        row["error"] = exc.message
        return row
    summary = summarize(results)
    if not entry.incomplete:  # a journal still grows: summarised afresh each time
        write_summary(entry.path, summary)
    row.update(summary)
    return row


def spec_rows(root: Path) -> list[dict]:
    """Each spec with saved runs: how many, and the latest."""
    by_spec: dict[str, list] = {}
    for entry in list_runs(root):
        by_spec.setdefault(entry.spec_name, []).append(entry)
    return [
        {
            "spec": name,
            "runs": len(entries),
            "latest_run_id": entries[-1].run_id,
            "latest_path": str(entries[-1].path),
        }
        for name, entries in sorted(by_spec.items())
    ]


def _spec_name(spec: str) -> tuple[str, Path | None]:
    if spec.endswith(SPEC_SUFFIXES) or "/" in spec or Path(spec).is_file():
        path = Path(spec)
        return spec_name_for(path), path
    return spec, None


@click.command(name="list")
@click.argument("spec", required=False)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text: a table; json: the same rows as a list of objects.",
)
def command(spec: str | None, output_format: str) -> None:
    """List specs with saved runs, or the runs of SPEC.

    Without SPEC: each spec under the nearest .caliper/ folder, its number of runs and its
    latest run. With SPEC (a spec name or spec file): each run with its id, time, engine, k,
    score with its 95% interval (the one `caliper report` shows), the skills it ablated
    (how you find the control run to compare against) and whether it was cut short:
    `partial` (stopped early and saved) or `incomplete` (killed: only its journal exists;
    the attempts it holds are shown, `caliper run SPEC --resume RUN` continues it).

    \b
    Examples:
      caliper list
      caliper list my-skill.eval.yaml
      caliper list my-skill --format json

    \b
    Exit codes:
      0  the list was shown (an empty list included)
      2  SPEC has no saved runs
    """
    cwd = Path.cwd()
    if spec is None:
        try:
            root = caliper_root(cwd, None)
        except ResultsError as exc:
            if output_format == "json":
                click.echo("[]")
            else:
                click.echo(exc.message)
            return
        rows = spec_rows(root)
        if output_format == "json":
            click.echo(json.dumps(rows, indent=2))
        else:
            from caliper.report.list_view import render_specs  # rich: text output only

            render_specs(rows, root, _console())
        return
    name, spec_path = _spec_name(spec)
    root = caliper_root(cwd, spec_path)
    entries = list_runs(root, name)
    if not entries:
        known = sorted({e.spec_name for e in list_runs(root)})
        hint = f"Specs with saved runs: {', '.join(known)}." if known else "Run it first."
        raise UsageError(f"No saved runs for spec {name!r} under {root / 'results'}.", hint=hint)
    rows = [run_row(entry) for entry in reversed(entries)]
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2))
    else:
        from caliper.report.list_view import render_runs

        render_runs(name, rows, _console())


def _console():
    from caliper.report import make_console

    return make_console()
