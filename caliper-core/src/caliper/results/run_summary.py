"""A saved run's one-row summary (what ``caliper list SPEC`` shows), kept beside the run.

Listing a spec's runs would otherwise decode and score every attempt of every run. The
summary lives in a hidden sidecar, ``.<run file name>.summary``, next to the run file, written
through the one output writer (:func:`caliper.system.output_file.write_output`). It records the run
file's size and modification time; a summary whose run file no longer matches (rewritten,
replaced) is ignored and computed again, so it can only ever describe the file beside it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caliper.system.output_file import OutputWriteError, write_output

if TYPE_CHECKING:
    from caliper.results.models import RunResults

SUMMARY_VERSION = 1


def summary_path(run_path: Path) -> Path:
    """The sidecar that holds ``run_path``'s summary."""
    return run_path.with_name(f".{run_path.name}.summary")


def summarize(results: RunResults) -> dict[str, Any]:
    """The listing fields of ``results``: the score with the 95 % interval ``caliper report``
    shows, the run's shape and how it was derived."""
    from caliper.results.meta_labels import ablated_names, derived_kind, derived_short
    from caliper.results.scoring import score_run
    from caliper.results.stats import interval_data

    meta = results.meta
    run = score_run(results)
    row: dict[str, Any] = dict(
        started_at=meta.started_at,
        engine=":".join(p for p in (meta.backend, meta.model) if p) or None,
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


def _stamp(run_path: Path) -> tuple[int, int] | None:
    try:
        stat = run_path.stat()
    except OSError:
        return None
    return stat.st_size, stat.st_mtime_ns


def read_summary(run_path: Path) -> dict[str, Any] | None:
    """The saved summary of ``run_path``, or None when there is none, it is unreadable, or it
    was written for another version of the file."""
    stamp = _stamp(run_path)
    if stamp is None:
        return None
    try:
        data = json.loads(summary_path(run_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != SUMMARY_VERSION:
        return None
    if [data.get("size"), data.get("mtime_ns")] != list(stamp):
        return None
    row = data.get("row")
    return row if isinstance(row, dict) else None


def write_summary(run_path: Path, row: dict[str, Any]) -> None:
    """Save ``row`` as ``run_path``'s summary, stamped with the file as it is now.

    Best effort: a summary that cannot be written is computed again by the next listing, so
    a failure here never fails the save of the run itself.
    """
    stamp = _stamp(run_path)
    if stamp is None:
        return
    text = json.dumps(
        {"version": SUMMARY_VERSION, "size": stamp[0], "mtime_ns": stamp[1], "row": row}
    )
    try:
        write_output(summary_path(run_path), text)
    except (OutputWriteError, OSError):
        return  # no temporary file is left; the next listing computes it
