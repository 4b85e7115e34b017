"""The history page's per-run detail: each run's tasks and scores, a task's score over runs,
and the labels (derived-from parent, baseline pair arm) a run carries."""

from __future__ import annotations

from typing import Any

from caliper.report import fmt
from caliper.results.models import RunResults
from caliper.results.scoring import TaskScore, score_run

SPARK_BLOCKS = "▁▂▃▄▅▆▇█"


def baseline_label(row: dict[str, Any]) -> str | None:
    """``baseline PAIR-ID: control`` for one arm of a ``caliper run --baseline`` pair."""
    baseline = row.get("baseline")
    if not baseline:
        return None
    return f"baseline {baseline.get('id') or '?'}: {baseline.get('arm') or '?'}"


def _spark(values: list[float | None]) -> str:
    """A sparkline of rates in ``[0, 1]`` (``·`` where the run has no score for the task)."""
    return "".join(
        "·" if v is None else SPARK_BLOCKS[round(max(0.0, min(1.0, v)) * (len(SPARK_BLOCKS) - 1))]
        for v in values
    )


def _task_line(task: TaskScore) -> dict[str, Any]:
    return {
        "name": task.name,
        "status": task.status.value,
        "passed": f"{task.successes}/{task.usable}",
        "score_text": fmt.pct_interval(task.score, task.score_interval),
        "activation_text": fmt.pct(task.activation_score),
    }


def history_detail(
    rows: list[dict[str, Any]], loaded: dict[str, RunResults], confidence: float
) -> dict[str, Any]:
    """``runs``: each readable run (oldest first) with its label and its tasks' scores, for
    the page's run picker; ``tasks``: a row per task (in first-seen order) with its score in
    each run and a sparkline of them; ``pairs``: baseline pairs as ``{id, control, full}``
    (``id`` is the pair id, then the engine when the invocation had several)."""
    runs: list[dict[str, Any]] = []
    scores: dict[str, dict[str, float | None]] = {}
    pairs: dict[str, dict[str, Any]] = {}
    for row in rows:
        results = loaded.get(row["run_id"])
        if results is None:
            continue
        scored = score_run(results, confidence)
        for task in scored.tasks:
            scores.setdefault(task.name, {})[row["run_id"]] = task.score
        runs.append(
            {
                "run_id": row["run_id"],
                "engine": row.get("engine") or "unknown",
                "score_text": fmt.pct(row["score"]),
                "derived": row.get("derived"),
                "parent": row.get("parent") or row.get("parent_run"),
                "baseline": baseline_label(row),
                "tasks": [_task_line(t) for t in scored.tasks],
            }
        )
        baseline = row.get("baseline")
        if baseline and baseline.get("id"):
            # one invocation's pairs share an id, one pair per engine
            key = f"{baseline['id']} {baseline.get('engine') or ''}".strip()
            pair = pairs.setdefault(key, {"id": key})
            arm = {"run_id": row["run_id"], "score": fmt.pct(row["score"])}
            pair[str(baseline.get("arm"))] = arm
    order = [r["run_id"] for r in runs]
    tasks = []
    for name, by_run in scores.items():
        values = [by_run.get(run_id) for run_id in order]
        tasks.append(
            {
                "name": name,
                "cells": [
                    "—" if run_id not in by_run else fmt.pct(by_run[run_id]) for run_id in order
                ],
                "spark": _spark(values),
            }
        )
    return {"runs": runs, "tasks": tasks, "pairs": list(pairs.values())}
