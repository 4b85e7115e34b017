"""``caliper history``: a spec's score and activation over its saved runs, oldest first."""

from __future__ import annotations

import json
from pathlib import Path

import click

from caliper.commands.confidence import confidence_option
from caliper.errors import UsageError


def history_rows(entries, confidence: float, keep: dict | None = None) -> list[dict]:
    """One row per saved run (oldest first): engine, ablation, rates with intervals.

    An unreadable file gets a row with ``error`` instead of numbers. ``keep`` (when given)
    gets each run read, by run id, so the html page need not read them again.
    """
    from caliper.results.meta_labels import ablated_names, derived_kind, derived_short
    from caliper.results.scoring import score_run
    from caliper.results.stats import interval_data
    from caliper.results.store import ResultsError, load_run

    rows = []
    for entry in entries:
        row: dict = {"run_id": entry.run_id, "path": str(entry.path)}
        try:
            results = load_run(entry.path)
        except ResultsError as exc:
            row["error"] = exc.message
            rows.append(row)
            continue
        if keep is not None:
            keep[entry.run_id] = results
        meta = results.meta
        run = score_run(results, confidence)
        row.update(
            started_at=meta.started_at,
            backend=meta.backend,
            model=meta.model,
            engine=":".join(p for p in (meta.backend, meta.model) if p) or None,
            ablated=ablated_names(meta),
            k=meta.k,
            partial=meta.partial,
            tasks=len(results.tasks),
            scored_tasks=run.scored_tasks,
            score=run.score,
            score_interval=interval_data(run.score_interval),
            activation=run.avg_activation_score,
            activation_interval=interval_data(run.activation_interval),
            derived_by=derived_kind(meta),
            parent_run=meta.parent_run,
            derived=derived_short(meta),
            baseline=dict(meta.baseline) if meta.baseline else None,
        )
        rows.append(row)
    return rows


SPARK_BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float | None]) -> str:
    """A terminal sparkline of rates in ``[0, 1]`` (``·`` where a run has no rate)."""
    out = []
    for value in values:
        if value is None:
            out.append("·")
        else:
            level = max(0.0, min(1.0, value))
            out.append(SPARK_BLOCKS[round(level * (len(SPARK_BLOCKS) - 1))])
    return "".join(out)


def _interval(data: dict | None) -> str:
    return "" if not data else f"[{data['low'] * 100:.0f}–{data['high'] * 100:.0f}%]"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def render_text(spec: str, rows: list[dict]) -> str:
    """The terminal form: sparklines of score and activation, then one line per run."""
    good = [r for r in rows if "error" not in r]
    lines = [
        f"{spec}: {len(rows)} saved run(s), oldest first",
        f"  score       {sparkline([r['score'] for r in good])}",
    ]
    if any(r["activation"] is not None for r in good):
        lines.append(f"  activation  {sparkline([r['activation'] for r in good])}")
    lines.append("")
    header = f"{'run':<24} {'engine':<30} {'score':>7} {'interval':<10} {'activation':>10}  notes"
    lines += [header, "─" * len(header)]
    for r in rows:
        if "error" in r:
            lines.append(f"{r['run_id']:<24} unreadable: {r['error']}")
            continue
        notes = []
        if r["ablated"]:
            notes.append(f"without {', '.join(r['ablated'])}")
        if r["partial"]:
            notes.append("partial")
        if r.get("derived"):
            notes.append(r["derived"])
        if r.get("baseline"):
            notes.append(f"baseline {r['baseline'].get('id')}: {r['baseline'].get('arm')}")
        lines.append(
            f"{r['run_id']:<24} {(r['engine'] or 'unknown')[:30]:<30} {_pct(r['score']):>7} "
            f"{_interval(r['score_interval']):<10} {_pct(r['activation']):>10}  "
            f"{'; '.join(notes)}".rstrip()
        )
    return "\n".join(lines)


def write_history_page(
    name: str, entries, output: Path | None, confidence: float, default: Path | None = None
) -> None:
    """The html page over ``entries`` (one spec's saved runs): written at ``output`` (else
    ``default``; else stdout) with each run's report page beside it, said on stderr."""
    from caliper.report.html.history_output import write_history
    from caliper.report.html.output import runs_dir

    loaded: dict = {}
    rows = history_rows(entries, confidence, keep=loaded)
    target = output or default
    written = write_history(name, rows, target, confidence, loaded=loaded)
    if target is not None:
        click.echo(f"Wrote {target} and {written} run report(s) in {runs_dir(target)}.", err=True)


def report_spec_page(ref: str, output: Path | None, confidence: float) -> bool:
    """``caliper report SPEC --format html``: write the page over SPEC's runs (the history
    page) and return True; False when ``ref`` names one run or SPEC has no saved runs (the
    run report then resolves or refuses it as before)."""
    from caliper.results.store import list_runs, spec_of_ref

    found = spec_of_ref(ref, cwd=Path.cwd())
    if found is None:
        return False
    root, name = found
    entries = list_runs(root, name)
    if not entries:
        return False
    write_history_page(name, entries, output, confidence)
    return True


def _spec_name(spec: str) -> tuple[str, Path | None]:
    from caliper.commands.list_runs import _spec_name as name_of

    return name_of(spec)


@click.command(name="history")
@click.argument("spec")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "json", "html"]),
    default="text",
    show_default=True,
    help="text: sparklines and a table; json: one object per run; html: a page with charts "
    "(intervals as bands) linking to a report page per run, written beside it.",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --format html: the page to write (default: .caliper/reports/SPEC-history.html). "
    "Each run's report goes into FILE's stem + '.runs/' beside it.",
)
@confidence_option
def command(spec: str, output_format: str, output: Path | None, confidence: float) -> None:
    """Show SPEC's score and activation over its saved runs, oldest first.

    SPEC is a spec name or a spec file. Every run saved under the nearest .caliper/ folder
    is shown with its engine, what it ablated and both rates with their intervals. The html
    form draws the rates over time with the intervals as bands (a colour per engine, hollow
    dots for ablated runs), a matrix of the latest run of each engine, and links each point
    to that run's report page, which it writes beside the history page. In the page, pick a
    run to see its tasks and scores, follow each task's score over the runs, and see derived
    runs (regrade, retry, merge, review, resumed) with their parent and baseline pairs as one
    pair. `caliper report SPEC --format html -o FILE` writes the same page.

    \b
    Examples:
      caliper history my-skill
      caliper history my-skill.eval.yaml --format json | jq '.[].score'
      caliper history my-skill --format html -o my-skill-history.html

    \b
    Exit codes:
      0  the history was shown (or written)
      2  SPEC has no saved runs, a bad --confidence, or the html page cannot be
         written
    """
    from caliper.results.store import caliper_root, list_runs

    if output is not None and output_format != "html":
        raise UsageError("-o/--output is for --format html.", hint="Add --format html.")
    name, spec_path = _spec_name(spec)
    root = caliper_root(Path.cwd(), spec_path)
    entries = list_runs(root, name)
    if not entries:
        known = sorted({e.spec_name for e in list_runs(root)})
        hint = f"Specs with saved runs: {', '.join(known)}." if known else "Run it first."
        raise UsageError(f"No saved runs for spec {name!r} under {root / 'results'}.", hint=hint)
    if output_format == "html":
        default = root / "reports" / f"{name}-history.html"
        write_history_page(name, entries, output, confidence, default=default)
        return
    rows = history_rows(entries, confidence)
    if output_format == "json":
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        click.echo(render_text(name, rows))
