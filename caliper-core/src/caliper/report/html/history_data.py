"""What the history page shows: the charts' points, the runs table and the engine matrix."""

from __future__ import annotations

from typing import Any

from caliper.report import fmt
from caliper.report.html.svg import ChartPoint, time_chart

PALETTE = ("#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037")


def engine_colours(rows: list[dict[str, Any]]) -> dict[str, str]:
    """A colour per engine, in the order engines first appear."""
    colours: dict[str, str] = {}
    for row in rows:
        engine = row.get("engine") or "unknown"
        if "error" not in row and engine not in colours:
            colours[engine] = PALETTE[len(colours) % len(PALETTE)]
    return colours


def _title(row: dict[str, Any], key: str) -> str:
    interval = row.get(f"{key}_interval")
    band = f" [{interval['low'] * 100:.1f}–{interval['high'] * 100:.1f}%]" if interval else ""
    ablated = f", without {', '.join(row['ablated'])}" if row["ablated"] else ""
    return f"{row['run_id']} · {row['engine'] or 'unknown'}{ablated}: {fmt.pct(row[key])}{band}"


def _short_time(row: dict[str, Any]) -> str:
    """``11-30 18:01`` from the run id (a UTC timestamp), else the run id itself."""
    run_id = row["run_id"]
    if len(run_id) >= 16 and run_id[10] == "T":
        return f"{run_id[5:10]} {run_id[11:13]}:{run_id[14:16]}"
    return run_id


def chart(rows: list[dict[str, Any]], key: str, links: dict[str, str], label: str):
    """The time chart of ``key`` (``score`` or ``activation``) over the readable runs."""
    colours = engine_colours(rows)
    points = []
    for row in rows:
        if "error" in row:
            continue
        interval = row.get(f"{key}_interval")
        points.append(
            ChartPoint(
                value=row[key],
                low=interval["low"] if interval else None,
                high=interval["high"] if interval else None,
                title=_title(row, key),
                href=links.get(row["run_id"]),
                colour=colours[row.get("engine") or "unknown"],
                hollow=bool(row["ablated"]),
                label=_short_time(row),
            )
        )
    return time_chart(points, label=label)


def table_rows(rows: list[dict[str, Any]], links: dict[str, str]) -> list[dict[str, Any]]:
    """The runs table (newest first), with display strings and links."""
    colours = engine_colours(rows)
    out = []
    for row in reversed(rows):
        shown = dict(row)
        shown["href"] = links.get(row["run_id"])
        if "error" not in row:
            shown["colour"] = colours[row.get("engine") or "unknown"]
            shown["score_text"] = fmt.pct(row["score"])
            shown["activation_text"] = fmt.pct(row["activation"])
        out.append(shown)
    return out
