"""What the compare page and the engine matrix show, as plain data (no HTML here).

The comparison itself (which tasks match, Δ, regressions, warnings, and the significance
figures once the statistics work provides them) comes from :mod:`caliper.results.compare`;
this module adds what only a page needs: each side's intervals and attempt strips, and the
matrix of several runs of one spec.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from caliper.report import fmt
from caliper.report.html.run_data import engine_label
from caliper.results.compare import RunComparison, ablated_names, comparison_data
from caliper.results.models import RunResults
from caliper.results.scoring import TaskScore, score_run
from caliper.results.stats import (
    DEFAULT_CONFIDENCE,
    interval_data,
    newcombe_difference_interval,
    paired_mean_difference_interval,
)

SIGNIFICANCE_KEYS = ("p_value", "significant", "verdict", "delta_interval")
"""Per-task keys of ``caliper compare --format json`` that the page shows when present."""


def heat(value: float | None) -> str:
    """A background colour for a rate: red at 0 %, yellow at 50 %, green at 100 %."""
    if value is None:
        return "#f6f8fa"
    return f"hsl({round(max(0.0, min(1.0, value)) * 120)}, 70%, 85%)"


def run_label(results: RunResults) -> str:
    """``engine`` plus ``without X`` for an ablated run."""
    ablated = ablated_names(results.meta)
    label = engine_label(results.meta.backend, results.meta.model)
    return f"{label} without {', '.join(ablated)}" if ablated else label


def _strip(results: RunResults, name: str) -> list[dict[str, str]]:
    for task in results.tasks:
        if task.name == name:
            return [
                {"outcome": a.outcome.value, "symbol": fmt.STRIP_SYMBOLS[a.outcome][0]}
                for a in task.attempts
            ]
    return []


def _side(score: TaskScore) -> dict[str, Any]:
    return {
        "score": score.score,
        "text": fmt.pct(score.score),
        "counts": f"{score.successes}/{score.usable}",
        "interval": interval_data(score.score_interval),
        "status": score.status.value,
    }


def _significance(row: dict[str, Any]) -> dict[str, Any]:
    """The significance figures of one task row of the comparison's data, if it has them."""
    return {key: row[key] for key in SIGNIFICANCE_KEYS if key in row and row[key] is not None}


def compare_view(
    a: RunResults,
    b: RunResults,
    comparison: RunComparison,
    confidence: float = DEFAULT_CONFIDENCE,
) -> dict[str, Any]:
    """The compare page as data: both sides per task, Δ with its interval, significance."""
    a_run, b_run = score_run(a, confidence), score_run(b, confidence)
    a_tasks = {t.name: t for t in a_run.tasks}
    b_tasks = {t.name: t for t in b_run.tasks}
    data = comparison_data(comparison)
    rows = []
    pairs = []
    for task, row_data in zip(comparison.tasks, data["tasks"], strict=True):
        sa, sb = a_tasks[task.name], b_tasks[task.name]
        extra = _significance(row_data)
        delta_interval = extra.pop("delta_interval", None) or interval_data(
            newcombe_difference_interval(
                sa.successes, sa.usable, sb.successes, sb.usable, confidence
            )
        )
        pairs.append((sa.successes, sa.usable, sb.successes, sb.usable))
        rows.append(
            {
                "name": task.name,
                "a": _side(sa),
                "b": _side(sb),
                "a_strip": _strip(a, task.name),
                "b_strip": _strip(b, task.name),
                "delta": task.delta,
                "delta_text": fmt.signed_pct(task.delta),
                "delta_interval": delta_interval,
                "regression": task.regression,
                "significance": extra,
                "a_activation": fmt.pct(task.a_activation),
                "b_activation": fmt.pct(task.b_activation),
                "activation_delta": fmt.signed_pct(task.activation_delta),
            }
        )
    overall_interval = data.get("delta_interval") or interval_data(
        paired_mean_difference_interval(pairs, confidence)
    )
    engines_differ = a.meta.spec_name == b.meta.spec_name and engine_label(
        a.meta.backend, a.meta.model
    ) != engine_label(b.meta.backend, b.meta.model)
    return {
        "title": comparison.title,
        "spec_name": comparison.spec_name,
        "a": {"run_id": a.meta.run_id, "label": run_label(a), "path": comparison.a_path},
        "b": {"run_id": b.meta.run_id, "label": run_label(b), "path": comparison.b_path},
        "a_overall": fmt.pct(comparison.a_overall),
        "b_overall": fmt.pct(comparison.b_overall),
        "a_interval": interval_data(a_run.score_interval),
        "b_interval": interval_data(b_run.score_interval),
        "delta": comparison.delta,
        "delta_text": fmt.signed_pct(comparison.delta),
        "delta_interval": overall_interval,
        "overall_significance": {
            k: data[k] for k in SIGNIFICANCE_KEYS if k in data and k != "delta_interval"
        },
        "has_significance": any(r["significance"] for r in rows),
        "has_regression": comparison.has_regression,
        "tasks": rows,
        "only_in_a": comparison.only_in_a,
        "only_in_b": comparison.only_in_b,
        "warnings": comparison.warnings,
        "tokens": (fmt.tokens(comparison.usage.a_tokens), fmt.tokens(comparison.usage.b_tokens)),
        "tokens_delta": fmt.signed_pct(comparison.usage.tokens_delta_pct),
        "wall": (fmt.duration(comparison.usage.a_wall), fmt.duration(comparison.usage.b_wall)),
        "wall_delta": fmt.signed_pct(comparison.usage.wall_delta_pct),
        "confidence": confidence,
        "matrix": matrix_view([a, b], confidence) if engines_differ else None,
    }


def matrix_view(
    runs: Sequence[RunResults], confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, Any]:
    """Tasks down, runs across: each cell a task's score, interval and strip in that run.

    Tasks are listed in the order they first appear; a run without a task gets an empty cell.
    """
    columns = []
    names: list[str] = []
    scored = []
    for results in runs:
        run = score_run(results, confidence)
        scored.append({t.name: t for t in run.tasks})
        columns.append(
            {
                "label": run_label(results),
                "run_id": results.meta.run_id,
                "overall": fmt.pct(run.score),
                "overall_value": run.score,
                "interval": interval_data(run.score_interval),
            }
        )
        names += [t.name for t in results.tasks if t.name not in names]
    rows = []
    for name in names:
        cells = []
        for results, by_name in zip(runs, scored, strict=True):
            score = by_name.get(name)
            if score is None:
                cells.append(None)
                continue
            cells.append(
                {
                    "text": fmt.pct(score.score),
                    "counts": f"{score.successes}/{score.usable}",
                    "interval": interval_data(score.score_interval),
                    "colour": heat(score.score),
                    "strip": _strip(results, name),
                }
            )
        rows.append({"name": name, "cells": cells})
    return {"columns": columns, "rows": rows}
