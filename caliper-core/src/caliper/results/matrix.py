"""A matrix: the runs of one spec on several engines, side by side (``caliper report --matrix``).

``caliper run SPEC --model A --model B …`` saves one run per engine, tied together by
``meta.matrix`` (the same ``id``); ``caliper report --matrix ID`` (or several run files) reads
them back. :func:`build_matrix` gives, per task and for the whole run, each engine's success
rate with its Wilson interval (from :func:`caliper.results.scoring.score_run`), and for every
pair of engines the difference with Newcombe's interval and a test: Fisher's exact test per
task, the stratified exact test for the whole run, all of them corrected together with Holm
(:mod:`caliper.results.significance`), exactly as ``caliper compare`` tests two runs. A
difference is *significant* when its Holm-adjusted p-value is at most ``1 − confidence``.
Pure: nothing is read or printed here.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import attrs

from caliper.results.models import RunResults
from caliper.results.scoring import TaskScore, score_run
from caliper.results.significance import fisher_exact, holm_adjust, stratified_exact_test
from caliper.results.stats import (
    Interval,
    interval_data,
    newcombe_difference_interval,
    paired_mean_difference_interval,
)


@attrs.frozen
class MatrixEngine:
    """One column of the matrix: an engine and the run it made."""

    label: str
    run: str
    """``SPEC/RUN-ID`` of its run."""
    score: float | None
    score_interval: Interval | None
    partial: bool


@attrs.frozen
class MatrixCell:
    """One engine on one task: successes over usable attempts, the rate and its interval."""

    successes: int
    usable: int
    score: float | None
    interval: Interval | None
    status: str


@attrs.frozen
class MatrixDifference:
    """Engine ``b`` minus engine ``a`` on one task (``task``) or the whole run (``None``)."""

    task: str | None
    a: str
    b: str
    delta: float | None
    interval: Interval | None
    p_value: float | None
    p_adjusted: float | None
    significant: bool


@attrs.frozen
class MatrixTask:
    """One row: a task, with one cell per engine (``None``: the engine's run lacks it)."""

    name: str
    cells: list[MatrixCell | None]


@attrs.frozen
class Matrix:
    """The whole side-by-side view (see :func:`build_matrix`)."""

    matrix_id: str | None
    spec_name: str
    confidence: float
    engines: list[MatrixEngine]
    tasks: list[MatrixTask]
    differences: list[MatrixDifference]
    tests: int
    """How many tests Holm's correction covered."""

    def difference(self, task: str | None, a: str, b: str) -> MatrixDifference | None:
        """The difference ``b − a`` on ``task`` (``None``: the whole run), if it was tested."""
        for item in self.differences:
            if (item.task, item.a, item.b) == (task, a, b):
                return item
        return None

    def significant_on(self, task: str | None, engine: str) -> bool:
        """Whether ``engine`` differs significantly from some other engine on ``task``."""
        return any(
            d.significant and engine in (d.a, d.b) and d.task == task for d in self.differences
        )


def engine_label(results: RunResults) -> str:
    """How a matrix names the engine of ``results``: the ``--model`` it was asked as, else
    ``BACKEND:MODEL``."""
    meta = results.meta
    matrix = meta.matrix or {}
    if matrix.get("engine"):
        return str(matrix["engine"])
    return meta.requested_model or ":".join(p for p in (meta.backend, meta.model) if p) or "?"


def _cell(score: TaskScore) -> MatrixCell:
    return MatrixCell(
        successes=score.successes,
        usable=score.usable,
        score=score.score,
        interval=score.score_interval,
        status=score.status.value,
    )


def _unique(labels: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} #{seen[label]}")
    return out


def build_matrix(runs: Sequence[RunResults], confidence: float) -> Matrix:
    """The matrix of ``runs`` (one per engine, in the order given) at ``confidence``."""
    scored = [score_run(results, confidence) for results in runs]
    labels = _unique([engine_label(results) for results in runs])
    engines = [
        MatrixEngine(
            label=label,
            run=f"{results.meta.spec_name}/{results.meta.run_id}",
            score=run.score,
            score_interval=run.score_interval,
            partial=results.meta.partial,
        )
        for label, results, run in zip(labels, runs, scored, strict=True)
    ]
    names: list[str] = []
    for results in runs:
        names += [t.name for t in results.tasks if t.name not in names]
    by_engine = [{t.name: t for t in run.tasks} for run in scored]
    tasks = [
        MatrixTask(
            name=name,
            cells=[_cell(scores[name]) if name in scores else None for scores in by_engine],
        )
        for name in names
    ]
    raw: list[tuple[str | None, int, int, float | None, Interval | None, float | None]] = []
    for i, j in itertools.combinations(range(len(runs)), 2):
        pairs = []
        for name in names:
            a, b = by_engine[i].get(name), by_engine[j].get(name)
            if a is None or b is None or not a.usable or not b.usable:
                continue
            counts = (a.successes, a.usable, b.successes, b.usable)
            pairs.append(counts)
            delta = b.successes / b.usable - a.successes / a.usable
            interval = newcombe_difference_interval(*counts, confidence=confidence)
            raw.append((name, i, j, delta, interval, fisher_exact(*counts)))
        if len(pairs) > 1:
            delta = sum(xb / nb - xa / na for xa, na, xb, nb in pairs) / len(pairs)
            interval = paired_mean_difference_interval(pairs, confidence)
            raw.append((None, i, j, delta, interval, stratified_exact_test(pairs)))
    adjusted = holm_adjust([p for *_rest, p in raw if p is not None])
    alpha = 1.0 - confidence
    differences = [
        MatrixDifference(
            task=task,
            a=labels[i],
            b=labels[j],
            delta=delta,
            interval=interval,
            p_value=p,
            p_adjusted=q,
            significant=q <= alpha and abs(delta or 0.0) > 1e-12,
        )
        for (task, i, j, delta, interval, p), q in zip(raw, adjusted, strict=True)
    ]
    first = runs[0].meta if runs else None
    matrix_id = (first.matrix or {}).get("id") if first is not None else None
    return Matrix(
        matrix_id=matrix_id,
        spec_name=first.spec_name if first is not None else "",
        confidence=confidence,
        engines=engines,
        tasks=tasks,
        differences=differences,
        tests=len(raw),
    )


def matrix_data(matrix: Matrix) -> dict[str, Any]:
    """The matrix as JSON-ready data (``caliper report --matrix --format json``)."""

    def cell(c: MatrixCell | None) -> dict[str, Any] | None:
        if c is None:
            return None
        return {
            "successes": c.successes,
            "usable": c.usable,
            "score": c.score,
            "interval": interval_data(c.interval),
            "status": c.status,
        }

    return {
        "matrix_id": matrix.matrix_id,
        "spec_name": matrix.spec_name,
        "confidence": matrix.confidence,
        "engines": [
            {
                "engine": e.label,
                "run": e.run,
                "score": e.score,
                "score_interval": interval_data(e.score_interval),
                "partial": e.partial,
            }
            for e in matrix.engines
        ],
        "tasks": [
            {
                "name": t.name,
                "engines": {e.label: cell(c) for e, c in zip(matrix.engines, t.cells, strict=True)},
            }
            for t in matrix.tasks
        ],
        "differences": [
            {
                "task": d.task,
                "a": d.a,
                "b": d.b,
                "delta": d.delta,
                "interval": interval_data(d.interval),
                "p_value": d.p_value,
                "p_adjusted": d.p_adjusted,
                "significant": d.significant,
            }
            for d in matrix.differences
        ],
        "tests": matrix.tests,
    }
