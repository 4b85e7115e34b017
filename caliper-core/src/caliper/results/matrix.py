"""A matrix: the runs of one spec on several engines, side by side (``caliper report --matrix``).

``caliper run SPEC --model A --model B …`` saves one run per engine, tied together by
``meta.matrix`` (the same ``id``); ``caliper report --matrix ID`` (or several run files) reads
them back. :func:`build_matrix` gives, per task and for the whole run, each engine's success
rate with its interval (from :func:`caliper.results.scoring.score_run`), and for every pair of
engines the difference with Newcombe's continuity-corrected interval and a test: Fisher's
exact test per task, the stratified exact test for the whole run, all of them corrected
together with Holm (:mod:`caliper.results.significance`). A difference is *significant* when
its Holm-adjusted p-value is at most ``1 − confidence``; its interval is made to hold 0
exactly when it is not (as ``caliper compare`` shows a difference beside its verdict).

Tasks that assert ``activates:`` get the same treatment for their activation rate (attempts
that loaded the expected skills over attempts where loading was observed): each cell and
engine carries it, and the activation differences form a second family, corrected with Holm
on its own, as ``caliper compare`` keeps success and activation apart.
Pure: nothing is read or printed here.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from caliper.results.models import RunResults
from caliper.results.scoring import TaskScore, score_run
from caliper.results.significance import fisher_exact, holm_adjust, stratified_exact_test
from caliper.results.stats import (
    Interval,
    agree_with_test,
    interval_data,
    newcombe_cc_difference_interval,
    paired_mean_difference_interval,
)
from caliper.system import attrs_classes


@attrs_classes.frozen
class MatrixEngine:
    """One column of the matrix: an engine and the run it made."""

    label: str
    run: str
    """``SPEC/RUN-ID`` of its run."""
    score: float | None
    score_interval: Interval | None
    partial: bool
    activation_score: float | None = None
    """Mean activation rate over the tasks that assert ``activates:`` (``None``: none)."""
    activation_interval: Interval | None = None


@attrs_classes.frozen
class MatrixCell:
    """One engine on one task: successes over usable attempts, the rate and its interval.

    ``activation_*`` are the same for the activation rate when the task asserts
    ``activates:`` (``activation_expected`` is then the list; ``None`` otherwise).
    """

    successes: int
    usable: int
    score: float | None
    interval: Interval | None
    status: str
    activation_expected: list[str] | None = None
    activation_successes: int = 0
    activation_usable: int = 0
    activation_score: float | None = None
    activation_interval: Interval | None = None

    @property
    def asserts_activation(self) -> bool:
        """True when the task asserts ``activates:`` in this engine's run."""
        return self.activation_expected is not None


SUCCESS = "success"
ACTIVATION = "activation"
MEASURES = (SUCCESS, ACTIVATION)
"""What a :class:`MatrixDifference` measures: the pass rate or the activation rate."""


@attrs_classes.frozen
class MatrixDifference:
    """Engine ``b`` minus engine ``a`` on one task (``task``) or the whole run (``None``),
    of the pass rate (``measure == "success"``) or of the activation rate."""

    task: str | None
    a: str
    b: str
    delta: float | None
    interval: Interval | None
    p_value: float | None
    p_adjusted: float | None
    significant: bool
    measure: str = SUCCESS


@attrs_classes.frozen
class MatrixTask:
    """One row: a task, with one cell per engine (``None``: the engine's run lacks it)."""

    name: str
    cells: list[MatrixCell | None]


@attrs_classes.frozen
class Matrix:
    """The whole side-by-side view (see :func:`build_matrix`)."""

    matrix_id: str | None
    spec_name: str
    confidence: float
    engines: list[MatrixEngine]
    tasks: list[MatrixTask]
    differences: list[MatrixDifference]
    tests: int
    """How many tests Holm's correction of the pass-rate differences covered."""
    activation_tests: int = 0
    """How many tests Holm's correction of the activation differences covered."""
    asserts_activation: bool = False
    """True when some task of some engine's run asserts ``activates:``."""
    significant_keys: frozenset[tuple[str | None, str, str]] = frozenset()
    """``(task, engine, measure)`` for every engine in a significant difference (built once:
    the views ask it for every cell)."""

    def difference(
        self, task: str | None, a: str, b: str, measure: str = SUCCESS
    ) -> MatrixDifference | None:
        """The difference ``b − a`` on ``task`` (``None``: the whole run), if it was tested."""
        for item in self.differences:
            if (item.task, item.a, item.b, item.measure) == (task, a, b, measure):
                return item
        return None

    def significant_on(self, task: str | None, engine: str, measure: str = SUCCESS) -> bool:
        """Whether ``engine`` differs significantly from some other engine on ``task``."""
        return (task, engine, measure) in self.significant_keys


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
        activation_expected=score.activation_expected,
        activation_successes=score.activation_successes,
        activation_usable=score.activation_usable,
        activation_score=score.activation_score,
        activation_interval=score.activation_interval,
    )


_Raw = tuple[str | None, int, int, float | None, Interval | None, float | None]


def _pair_tests(
    names: list[str], a: dict[str, tuple[int, int]], b: dict[str, tuple[int, int]], confidence
) -> list[tuple[str | None, float | None, Interval | None, float | None]]:
    """Fisher per task measured on both sides and, for several, the stratified whole-run
    test: ``(task or None, delta, interval, p)``."""
    out: list[tuple[str | None, float | None, Interval | None, float | None]] = []
    pairs = []
    for name in names:
        if name not in a or name not in b or not a[name][1] or not b[name][1]:
            continue
        counts = (*a[name], *b[name])
        pairs.append(counts)
        delta = b[name][0] / b[name][1] - a[name][0] / a[name][1]
        interval = newcombe_cc_difference_interval(*counts, confidence=confidence)
        out.append((name, delta, interval, fisher_exact(*counts)))
    if len(pairs) > 1:
        delta = sum(xb / nb - xa / na for xa, na, xb, nb in pairs) / len(pairs)
        interval = paired_mean_difference_interval(pairs, confidence)
        out.append((None, delta, interval, stratified_exact_test(pairs)))
    return out


def _judged(raw: list[_Raw], labels: list[str], confidence: float, measure: str):
    adjusted = holm_adjust([p for *_rest, p in raw if p is not None])
    alpha = 1.0 - confidence
    out = []
    for (task, i, j, delta, interval, p), q in zip(raw, adjusted, strict=True):
        significant = q <= alpha and abs(delta or 0.0) > 1e-12
        if delta is not None:  # the Δ interval holds 0 exactly when the test does not reject
            interval = agree_with_test(interval, delta, significant)
        out.append(
            MatrixDifference(
                task=task,
                a=labels[i],
                b=labels[j],
                delta=delta,
                interval=interval,
                p_value=p,
                p_adjusted=q,
                significant=significant,
                measure=measure,
            )
        )
    return out


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
            activation_score=run.avg_activation_score,
            activation_interval=run.activation_interval,
        )
        for label, results, run in zip(labels, runs, scored, strict=True)
    ]
    names = list(dict.fromkeys(t.name for results in runs for t in results.tasks))
    by_engine = [{t.name: t for t in run.tasks} for run in scored]
    tasks = [
        MatrixTask(
            name=name,
            cells=[_cell(scores[name]) if name in scores else None for scores in by_engine],
        )
        for name in names
    ]
    success = [{t.name: (t.successes, t.usable) for t in run.tasks if t.usable} for run in scored]
    activation = [
        {t.name: (t.activation_successes, t.activation_usable) for t in run.tasks} for run in scored
    ]
    raw: list[_Raw] = []
    act_raw: list[_Raw] = []
    for i, j in itertools.combinations(range(len(runs)), 2):
        for target, counts in ((raw, success), (act_raw, activation)):
            target += [
                (name, i, j, delta, interval, p)
                for name, delta, interval, p in _pair_tests(names, counts[i], counts[j], confidence)
            ]
    differences = _judged(raw, labels, confidence, SUCCESS) + _judged(
        act_raw, labels, confidence, ACTIVATION
    )
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
        activation_tests=len(act_raw),
        significant_keys=frozenset(
            (d.task, engine, d.measure)
            for d in differences
            if d.significant
            for engine in (d.a, d.b)
        ),
        asserts_activation=any(run.asserts_activation for run in scored),
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
            "activation": (
                {
                    "expected": c.activation_expected,
                    "successes": c.activation_successes,
                    "usable": c.activation_usable,
                    "score": c.activation_score,
                    "interval": interval_data(c.activation_interval),
                }
                if c.asserts_activation
                else None
            ),
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
                "activation_score": e.activation_score,
                "activation_interval": interval_data(e.activation_interval),
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
                "measure": d.measure,
            }
            for d in matrix.differences
        ],
        "tests": matrix.tests,
        "activation_tests": matrix.activation_tests,
    }
