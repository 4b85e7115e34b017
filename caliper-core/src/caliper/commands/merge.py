"""``caliper merge SHARD...``: join the shard runs of one run (``--shard I/N``) into the whole."""

from __future__ import annotations

import json
from pathlib import Path

import click

from caliper.commands.run_setup import check_save_targets
from caliper.errors import UsageError
from caliper.report import make_console
from caliper.report.run_view import render_run
from caliper.results import codec
from caliper.results.merge import ShardRun, check_shards, merge_data, merge_notes
from caliper.results.store import (
    RESULTS_DIR,
    ROOT_DIR,
    claim_results,
    find_caliper_dir,
    load_run_data,
    new_run_id,
    release_claim,
    resolve_run_ref,
    save_assembled,
)

EPILOG = """\b
Examples:
  caliper merge shard-*/.caliper/results/my-skill/*.json
  caliper merge my-skill/2026-12-01T10-00-00Z my-skill/2026-12-01T10-00-04Z --output run.json
  caliper report my-skill --min-score 0.8     # gate on the merged run (the latest)

\b
Exit codes:
  0  the shards were merged and saved
  1  the merged run could not be saved in .caliper/ (the message says where it went)
  2  a file is not a readable shard run, or the shards do not belong together:
     a different spec, skills, engine, k or shard count, a shard given twice
     (overlap), a shard missing, or a shard that stopped before all its attempts
     ran (the message names the two files and the field)
"""


@click.command(name="merge", epilog=EPILOG)
@click.argument("shards", nargs=-1, required=True, metavar="SHARD...")
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="PATH",
    help="Also save the merged results JSON to PATH.",
)
def command(shards: tuple[str, ...], output: Path | None) -> None:
    """Merge the N shard runs of one run into the whole run.

    Each SHARD is a results file saved by `caliper run SPEC --shard I/N` (or a run id, as
    `caliper list` shows it). The shards must come from the same spec, skills, engine and k,
    and all N must be given, each once and complete. The merged run is saved in the results
    store like a normal run, under a new run id, and reports exactly as the run would have
    unsharded; its meta.merged_from names the shards. It is saved in the nearest .caliper/
    folder at or above the current folder, else in a new .caliper/ in the current folder
    (never beside the spec path the shards recorded, which may be another machine's).
    """
    cwd = Path.cwd()
    runs = []
    for ref in shards:
        path = resolve_run_ref(ref, cwd=cwd)
        runs.append(ShardRun(path=path, data=load_run_data(path)))
    groups = arm_groups(runs)
    if len(groups) > 1 and output is not None:
        raise UsageError(
            "--output names one file, and these shards are of both arms of a baseline (each "
            "arm is merged into its own run).",
            hint="Drop --output: both merged arms are saved in .caliper/results/.",
        )
    for group in groups:
        _merge(group, output)
    ids = sorted({str(g[0].meta["baseline"]["id"]) for g in groups if g[0].meta.get("baseline")})
    for ident in ids:
        click.echo(
            f"Baseline {ident}: `caliper compare --baseline {ident}` judges the merged pair.",
            err=False,
        )


def arm_groups(runs: list) -> list[list]:
    """The shard runs to merge, one group per run they make up: the shards of a baseline's
    arms (``meta.baseline``) grouped by engine and arm, any other shards as one group."""
    groups: dict[tuple[str, str, str], list] = {}
    for run in runs:
        baseline = run.meta.get("baseline") or {}
        key = (
            str(baseline.get("id") or ""),
            str(baseline.get("engine") or ""),
            str(baseline.get("arm") or ""),
        )
        groups.setdefault(key, []).append(run)
    return list(groups.values())


def _merge(runs: list, output: Path | None) -> None:
    """Check the shards of one run, merge them, save the merged run and show it."""
    cwd = Path.cwd()
    check_shards(runs)
    for note in merge_notes(runs):
        click.echo(f"Note: {note}; the merged run records shard 1's.", err=True)
    spec_path = Path(str(runs[0].meta.get("spec_path") or runs[0].meta["spec_name"]))
    # where the user is: the shards' recorded spec path may be on another machine
    root = find_caliper_dir(cwd) or cwd.resolve() / ROOT_DIR
    check_save_targets(spec_path, output, root=root)
    folder = root / RESULTS_DIR / str(runs[0].meta["spec_name"])
    path, run_id = claim_results(folder, new_run_id())
    try:
        data = merge_data(runs, run_id)
        text = codec.dumps_data(data)
        results = codec.from_data(json.loads(text), transcripts=False)
        saved = save_assembled(text, results, path=path, output=output)
    except BaseException:  # Ctrl-C or a failed save: give the claimed name back
        release_claim(path)
        raise
    _show(results, saved, len(runs), output)


def _show(results, saved: Path, count: int, output: Path | None) -> None:
    """The merged run's report, then where it was saved."""
    console = make_console()
    render_run(results, console, path=saved)
    attempts = sum(len(task.attempts) for task in results.tasks)
    console.print(
        f"Merged {count} shard runs ({attempts} attempts) into run {results.meta.run_id}.",
        soft_wrap=True,
        markup=False,
    )
    if output is not None:
        console.print(f"A copy was saved to {output}", soft_wrap=True, markup=False)
