"""Writing the history page and, beside it, one report page per run it links to."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from caliper.report.html.compare_data import matrix_view
from caliper.report.html.history_tasks import history_detail
from caliper.report.html.output import emit_page, write_page, write_run_pages
from caliper.report.html.pages import history_page
from caliper.results.meta_labels import parent_label
from caliper.results.store import load_run
from caliper.system.output_file import writes_in_place


def _latest_per_variant(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The newest readable run of each engine-and-ablation variant (oldest variant first)."""
    latest: dict[tuple, dict[str, Any]] = {}
    for row in rows:
        if "error" not in row:
            latest[(row.get("engine"), tuple(row["ablated"]))] = row
    return list(latest.values())


def write_history(
    spec: str,
    rows: list[dict[str, Any]],
    target: Path | None,
    confidence: float,
    loaded: dict[str, Any] | None = None,
) -> int:
    """Write the history page of ``spec`` at ``target`` and each run's report in
    ``<target stem>.runs/``; return how many run reports were written.

    The run pages are :func:`caliper.report.html.output.write_run_pages`'s; links are
    relative, so the page and its folder can be moved or published together. A
    ``target`` written in place (a device, a FIFO, ``/dev/stdout``) or ``None`` (stdout)
    gets the page alone. ``loaded`` holds runs already read, by run id (the rest are read
    here).
    """
    # stdout, a device or a pipe has no folder beside it for the runs' pages
    in_place = target is None or writes_in_place(target)

    links: dict[str, str] = {}
    read = dict(loaded or {})
    loaded = {}
    rows = [dict(row) for row in rows]
    for row in rows:
        if "error" in row:
            continue
        results = read.get(row["run_id"]) or load_run(Path(row["path"]))
        loaded[row["run_id"]] = results
        row["parent"] = parent_label(results.meta)  # a merge's shards, not just "shards"
    if not in_place:
        ids = list(loaded)
        pages = write_run_pages([loaded[i] for i in ids], target, confidence)
        links = dict(zip(ids, pages, strict=True))
    variants = _latest_per_variant(rows)
    matrix = (
        matrix_view([loaded[r["run_id"]] for r in variants], confidence)
        if len(variants) > 1
        else None
    )
    detail = history_detail(rows, loaded, confidence)
    page = history_page(spec, rows, links, matrix, confidence=confidence, detail=detail)
    if target is None:
        emit_page(page, None)
    else:
        write_page(page, target)
    return len(links)
