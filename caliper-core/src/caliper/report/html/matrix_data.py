"""What the matrix page (``caliper report --matrix ID --format html``) shows, as plain data.

The figures are those of :func:`caliper.results.matrix.build_matrix`, written with the same
helpers as the text and Markdown forms (:mod:`caliper.report.matrix_view`), so the page and
the terminal never disagree. This module adds what only a page needs: each cell's k and its
clickable attempts, a per-task summary of the significant differences, and the viewer's data
for every attempt (keyed by :func:`engine_attempt_id`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from caliper.report import fmt
from caliper.report.html.compare_data import heat
from caliper.report.html.run_data import attempt_details
from caliper.report.matrix_view import (
    WHOLE_RUN,
    activation_text,
    delta_text,
    matrix_title,
    measure_name,
    overall_activation,
    success_text,
    tests_sentence,
    verdict,
)
from caliper.results.matrix import Matrix, MatrixCell, MatrixDifference
from caliper.results.models import RunResults, TaskResult


def engine_attempt_id(engine: int, task: int, attempt: int) -> str:
    """``e1-t0-a2``: attempt ``attempt`` (0-based position) of task row ``task`` in the run
    of engine column ``engine``."""
    return f"e{engine}-t{task}-a{attempt}"


def _buttons(engine: int, row: int, task: TaskResult) -> list[dict[str, Any]]:
    return [
        {
            "id": engine_attempt_id(engine, row, j),
            "number": a.attempt,
            "outcome": a.outcome.value,
            "symbol": fmt.STRIP_SYMBOLS[a.outcome][0],
        }
        for j, a in enumerate(task.attempts)
    ]


def _cell(
    matrix: Matrix, name: str, engine: int, row: int, cell: MatrixCell | None, task: TaskResult
) -> dict[str, Any] | None:
    if cell is None:
        return None
    label = matrix.engines[engine].label
    marked = matrix.significant_on(name, label)
    return {
        "text": success_text(cell, marked, sep=" "),
        "score": cell.score,
        "k": len(task.attempts),
        "marked": marked,
        "colour": heat(cell.score),
        "attempts": _buttons(engine, row, task),
        "activation": (
            activation_text(cell, matrix.significant_on(name, label, "activation"), sep=" ")
            if cell.asserts_activation
            else None
        ),
    }


def _difference(d: MatrixDifference) -> dict[str, Any]:
    return {
        "task": d.task if d.task is not None else WHOLE_RUN,
        "measure": measure_name(d),
        "a": d.a,
        "b": d.b,
        "delta": delta_text(d),
        "p_adjusted": fmt.p_value(d.p_adjusted),
        "verdict": verdict(d),
        "significant": d.significant,
    }


def _row_summary(matrix: Matrix, name: str | None) -> list[str]:
    """The significant differences on task ``name`` (``None``: the whole run),
    ``b − a: Δ [interval]`` each (empty: none)."""
    return [
        f"{d.b} − {d.a}: {delta_text(d)}" + (" (skill loaded)" if d.measure != "success" else "")
        for d in matrix.differences
        if d.task == name and d.significant
    ]


def matrix_page_view(matrix: Matrix, runs: Sequence[RunResults]) -> dict[str, Any]:
    """The matrix page as data: ``matrix`` (built from ``runs``, one per engine column, in the
    same order) with each cell's attempts and every attempt's viewer data."""
    by_name = [{t.name: t for t in results.tasks} for results in runs]
    attempts: dict[str, Any] = {}
    rows = []
    for row, task in enumerate(matrix.tasks):
        cells = []
        for engine, cell in enumerate(task.cells):
            record = by_name[engine].get(task.name)
            cells.append(_cell(matrix, task.name, engine, row, cell, record) if record else None)
            declared = [s.name for s in runs[engine].meta.skill_snapshots]
            for j, attempt in enumerate(record.attempts if record else []):
                details = attempt_details(record, attempt, declared)
                details["engine"] = matrix.engines[engine].label
                attempts[engine_attempt_id(engine, row, j)] = details
        rows.append({"name": task.name, "cells": cells, "summary": _row_summary(matrix, task.name)})
    return {
        "title": matrix_title(matrix),
        "spec_name": matrix.spec_name,
        "confidence": matrix.confidence,
        "engines": [
            {
                "label": e.label,
                "run": e.run,
                "partial": e.partial,
                "score": fmt.pct_interval(e.score, e.score_interval)
                + (" *" if matrix.significant_on(None, e.label) else ""),
                "activation": overall_activation(matrix, e) if matrix.asserts_activation else None,
            }
            for e in matrix.engines
        ],
        "rows": rows,
        "overall_summary": _row_summary(matrix, None),
        "asserts_activation": matrix.asserts_activation,
        "differences": [_difference(d) for d in matrix.differences],
        "tests_sentence": tests_sentence(matrix),
        "attempts": attempts,
    }
