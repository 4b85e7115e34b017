"""``caliper list``: the specs with saved runs, or one spec's runs."""

from __future__ import annotations

import json
from pathlib import Path

import click


def _engine(meta) -> str | None:
    return ":".join(p for p in (meta.backend, meta.model) if p) or None


def run_row(entry) -> dict:
    """One run as ``caliper list SPEC`` shows it (an unreadable file gets an ``error``): the
    score comes with the interval ``caliper report`` shows (95 %, ``score_interval``)."""
    from caliper.results.meta_labels import ablated_names, derived_kind, derived_short
    from caliper.results.scoring import score_run
    from caliper.results.stats import interval_data
    from caliper.results.store import ResultsError, load_run

    row: dict = {"run_id": entry.run_id, "path": str(entry.path)}
    try:
        results = load_run(entry.path, transcripts=False)
    except ResultsError as exc:
        row["error"] = exc.message
        return row
    meta = results.meta
    run = score_run(results)
    row.update(
        started_at=meta.started_at,
        engine=_engine(meta),
        k=meta.k,
        score=run.score,
        score_interval=interval_data(run.score_interval),
        scored_tasks=run.scored_tasks,
        tasks=len(results.tasks),
        avg_activation_score=run.avg_activation_score,
        activation_interval=interval_data(run.activation_interval),
        ablated=ablated_names(meta),
        partial=meta.partial,
        incomplete=meta.incomplete,
        attempts=sum(len(task.attempts) for task in results.tasks),
        shard=f"{meta.shard.get('index')}/{meta.shard.get('count')}" if meta.shard else None,
        matrix=(meta.matrix or {}).get("id"),
        baseline=dict(meta.baseline) if meta.baseline else None,
        merged_shards=len(meta.merged_from),
        derived_by=derived_kind(meta),
        parent_run=meta.parent_run,
        resumed=len(meta.resumed_at),
        derived=derived_short(meta),
    )
    if meta.incomplete:
        row["stop_reason"] = meta.stop_reason
    return row


def spec_rows(root: Path) -> list[dict]:
    """Each spec with saved runs: how many, and the latest."""
    from caliper.results.store import list_runs

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
    from caliper.results.store import SPEC_SUFFIXES
    from caliper.spec.model import spec_name_for

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
    from caliper.errors import UsageError
    from caliper.results.store import ResultsError, caliper_root, list_runs

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
