"""What the compare page and the engine matrix show, as plain data (no HTML here).

The comparison itself (which tasks match, Δ with its interval, the tests' p-values after
Holm's correction, verdicts, warnings, sensitivity) comes from
:mod:`caliper.results.compare`; this module adds what only a page needs: display strings,
attempt strips, and the matrix of several runs of one spec.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from caliper.report import fmt
from caliper.report.compare_spend_view import change_cells, shown_changes, unmeasured_note
from caliper.report.compare_view import ablation_headline
from caliper.report.html.run_data import AttemptDetails, attempt_id, engine_label
from caliper.results.compare import REGRESSED, RunComparison, TaskComparison, ablated_names
from caliper.results.models import RunResults, TaskResult
from caliper.results.scoring import TaskScore, score_run
from caliper.results.stats import DEFAULT_CONFIDENCE, interval_data


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


def _strip(task: TaskResult | None) -> list[dict[str, str]]:
    """The attempt strip of ``task`` (empty when the run has no such task)."""
    if task is None:
        return []
    return [
        {"outcome": a.outcome.value, "symbol": fmt.STRIP_SYMBOLS[a.outcome][0]}
        for a in task.attempts
    ]


def _by_name(results: RunResults) -> dict[str, TaskResult]:
    return {t.name: t for t in results.tasks}


def side_attempt_id(side: str, task_index: int, attempt_index: int) -> str:
    """``a-t0-a1``: attempt ``attempt_index`` of task ``task_index`` (in the compare table's
    order) on side ``a`` (before) or ``b`` (after)."""
    return f"{side}-t{task_index}-a{attempt_index}"


def _buttons(
    side: str, index: int, task: TaskResult | None, other: TaskResult | None, different: set[str]
) -> list[dict[str, Any]]:
    """The clickable attempt strip of one side of a task row (empty without the task).

    Each attempt says whether it is one of ``different`` (:func:`different_attempts`) and,
    as ``other``, what the attempt with the same position in the other run's task ``other``
    was (its outcome, or ``None`` when there is none there)."""
    if task is None:
        return []
    others = other.attempts if other else []
    return [
        {
            "id": side_attempt_id(side, index, j),
            "number": a.attempt,
            "outcome": a.outcome.value,
            "symbol": fmt.STRIP_SYMBOLS[a.outcome][0],
            "differs": side_attempt_id(side, index, j) in different,
            "other": others[j].outcome.value if j < len(others) else None,
        }
        for j, a in enumerate(task.attempts)
    ]


STRIP_LINE = 10
"""Attempts per line of a strip in the compare table (k=55: six lines, attempt 11 starts
the second, so an attempt's number can be read off its place)."""


def strip_buttons(rows: list[dict[str, Any]]) -> int:
    """How many attempt buttons wide the compare table's strips are: the longest strip of
    ``rows`` (:func:`_task_row`), at most :data:`STRIP_LINE`, at least 1."""
    longest = max((len(r[key]) for r in rows for key in ("a_attempts", "b_attempts")), default=1)
    return max(1, min(longest, STRIP_LINE))


def _side(side: str, results: RunResults, page: str | None) -> dict[str, Any]:
    """One run of the pair as the page's header names it: by reference, never by a local
    path (a shared page carries none), with the relative link to its own page if any."""
    return {
        "side": side,
        "run_id": results.meta.run_id,
        "label": run_label(results),
        "ref": run_ref(results),
        "page": page,
    }


def _side_details(
    side: str, results: RunResults, names: list[str], made: AttemptDetails
) -> dict[str, Any]:
    """The viewer's data for every attempt of ``results`` in the tasks ``names`` (the
    compare table's rows), keyed by :func:`side_attempt_id`; each also has ``run_attempt``,
    its id on the run's own page (:func:`caliper.report.html.run_data.attempt_id`). The
    attempts' data is taken from ``made`` (what the run pages made, else made here)."""
    declared = [snapshot.name for snapshot in results.meta.skill_snapshots]
    by_name = _by_name(results)
    position = {t.name: k for k, t in enumerate(results.tasks)}  # the task by_name holds
    details: dict[str, Any] = {}
    for i, name in enumerate(names):
        task = by_name.get(name)
        for j, record in enumerate(task.attempts if task else []):
            data = made.take(task, record, declared)
            data["run_attempt"] = attempt_id(position[name], j)
            details[side_attempt_id(side, i, j)] = data
    return details


def different_attempts(
    index: int, a_task: TaskResult | None, b_task: TaskResult | None
) -> list[str]:
    """The attempt ids (:func:`side_attempt_id`, both sides) of task row ``index`` whose
    outcome differs from the attempt with the same position in the other run; an attempt
    with no counterpart (one run has fewer attempts, or lacks the task) differs too."""
    a_list = a_task.attempts if a_task else []
    b_list = b_task.attempts if b_task else []
    ids: list[str] = []
    for j in range(max(len(a_list), len(b_list))):
        a_out = a_list[j].outcome if j < len(a_list) else None
        b_out = b_list[j].outcome if j < len(b_list) else None
        if a_out != b_out:
            if a_out is not None:
                ids.append(side_attempt_id("a", index, j))
            if b_out is not None:
                ids.append(side_attempt_id("b", index, j))
    return ids


def _activation_card(comparison: RunComparison) -> dict[str, Any] | None:
    """The overall activation change the text compare prints (``None`` when neither run's
    tasks assert ``activates:``)."""
    if comparison.activation_delta is None:
        return None
    return {
        "a": fmt.pct(comparison.a_activation_overall),
        "b": fmt.pct(comparison.b_activation_overall),
        "delta": comparison.activation_delta,
        "delta_text": fmt.signed_points(comparison.activation_delta),
        "interval": fmt.signed_interval(comparison.activation_delta_interval),
        "p": fmt.p_value(comparison.activation_p_adjusted),
        "verdict": comparison.activation_overall_verdict,
        "verdict_class": _verdict_class(comparison.activation_overall_verdict),
        "regression": comparison.activation_overall_regression,
    }


def p_text(value: float | None) -> str:
    """A p-value as people read it: ``0.031``, ``< 0.001``; ``—`` when there was no test."""
    if value is None:
        return fmt.DASH
    return "< 0.001" if value < 0.001 else f"{value:.3f}"


def _verdict_class(verdict: str) -> str:
    return verdict.replace(" ", "-")


def _task_row(
    index: int, a: dict[str, TaskResult], b: dict[str, TaskResult], task: TaskComparison
) -> dict[str, Any]:
    a_task, b_task = a.get(task.name), b.get(task.name)
    different = different_attempts(index, a_task, b_task)
    return {
        "name": task.name,
        # the "different from the other run" view: success rate changed or an attempt's
        # outcome differs from the same attempt index on the other side
        "differs": bool(different) or task.a_score != task.b_score,
        "different_attempts": different,
        "a_attempts": _buttons("a", index, a_task, b_task, set(different)),
        "b_attempts": _buttons("b", index, b_task, a_task, set(different)),
        "a": {
            "score": task.a_score,
            "text": fmt.pct(task.a_score),
            "counts": f"{task.a_successes}/{task.a_usable}",
            "interval": interval_data(task.a_interval),
        },
        "b": {
            "score": task.b_score,
            "text": fmt.pct(task.b_score),
            "counts": f"{task.b_successes}/{task.b_usable}",
            "interval": interval_data(task.b_interval),
        },
        "a_strip": _strip(a.get(task.name)),
        "b_strip": _strip(b.get(task.name)),
        "delta": task.delta,
        "delta_text": fmt.signed_pct(task.delta),
        "delta_interval": interval_data(task.delta_interval),
        "p": p_text(task.p_value),
        "p_adjusted": p_text(task.p_adjusted),
        "verdict": task.verdict,
        "verdict_class": _verdict_class(task.verdict),
        "regression": task.regression,
        "a_activation": fmt.pct(task.a_activation),
        "b_activation": fmt.pct(task.b_activation),
        "activation_delta": fmt.signed_pct(task.activation_delta),
        "activation_p": fmt.p_value(task.activation_p_adjusted),
        "activation_verdict": task.activation_verdict,
        "activation_regression": task.activation_regression,
    }


def _sensitivity(comparison: RunComparison) -> str | None:
    """One sentence on how small a drop the pair could have caught."""
    sens = comparison.sensitivity
    if sens is None:
        return None
    parts = []
    if sens.task_drop is not None:
        parts.append(f"a drop of {sens.task_drop * 100:.0f} points in one task")
    if sens.overall_drop is not None:
        parts.append(f"{sens.overall_drop * 100:.0f} points on every task")
    if not parts:
        return "At this k no drop, however large, could have been detected."
    text = f"With {sens.power * 100:.0f}% power this pair could detect {' or '.join(parts)}"
    if sens.k_needed is not None:
        text += (
            f"; catching {sens.target_drop * 100:.0f} points on every task needs k={sens.k_needed}"
        )
    return text + "."


def compare_view(
    a: RunResults,
    b: RunResults,
    comparison: RunComparison,
    confidence: float = DEFAULT_CONFIDENCE,
    pages: tuple[str | None, str | None] = (None, None),
    details: AttemptDetails | None = None,
) -> dict[str, Any]:
    """The compare page as data: both sides per task, Δ with its interval, p-values, verdicts.

    ``pages`` are relative links to the before and after runs' own report pages, where they
    were written beside the compare page (``None``: the page shows the command that makes it).
    ``details``: the attempts' viewer data already made for those pages, if any.
    """
    made = details or AttemptDetails()
    engines_differ = a.meta.spec_name == b.meta.spec_name and engine_label(
        a.meta.backend, a.meta.model
    ) != engine_label(b.meta.backend, b.meta.model)
    sides = [
        f"the {label} run {run_id} {side.phrase}"
        for label, run_id, side in (
            ("before", comparison.a_run_id, comparison.a_side),
            ("after", comparison.b_run_id, comparison.b_side),
        )
        if not side.complete
    ]
    a_tasks, b_tasks = _by_name(a), _by_name(b)
    names = [task.name for task in comparison.tasks]
    rows = [_task_row(i, a_tasks, b_tasks, task) for i, task in enumerate(comparison.tasks)]
    return {
        "title": comparison.title,
        "headline": ablation_headline(comparison),
        "spec_name": comparison.spec_name,
        "a": _side("a", a, pages[0]),
        "b": _side("b", b, pages[1]),
        "a_overall": fmt.pct(comparison.a_overall),
        "b_overall": fmt.pct(comparison.b_overall),
        "a_interval": interval_data(comparison.a_overall_interval),
        "b_interval": interval_data(comparison.b_overall_interval),
        "delta": comparison.delta,
        "delta_text": fmt.signed_pct(comparison.delta),
        "delta_interval": interval_data(comparison.delta_interval),
        "p": p_text(comparison.p_value),
        "p_adjusted": p_text(comparison.p_adjusted),
        "verdict": comparison.overall_verdict,
        "verdict_class": _verdict_class(comparison.overall_verdict),
        "overall_regression": comparison.overall_regression,
        "has_regression": comparison.has_regression,
        "regressed": REGRESSED,
        "correction": comparison.correction,
        "alpha": comparison.alpha,
        "tasks": rows,
        "different_count": sum(1 for row in rows if row["differs"]),
        "different_attempt_count": sum(len(row["different_attempts"]) for row in rows),
        "strip_buttons": strip_buttons(rows),
        "attempts": _side_details("a", a, names, made) | _side_details("b", b, names, made),
        "activation": _activation_card(comparison),
        "only_in_a": comparison.only_in_a,
        "only_in_b": comparison.only_in_b,
        "warnings": comparison.warnings,
        "not_comparable": sides,
        "sensitivity": _sensitivity(comparison),
        "tokens": (
            fmt.tokens(comparison.usage.a_tokens_per_attempt),
            fmt.tokens(comparison.usage.b_tokens_per_attempt),
        ),
        "tokens_delta": fmt.signed_pct(comparison.usage.tokens_per_attempt_delta_pct),
        "wall": (
            fmt.seconds(comparison.usage.a_agent_per_attempt),
            fmt.seconds(comparison.usage.b_agent_per_attempt),
        ),
        "wall_delta": fmt.signed_pct(comparison.usage.agent_per_attempt_delta_pct),
        "wall_clock": (
            fmt.clock_span(comparison.usage.a_wall_clock),
            fmt.clock_span(comparison.usage.b_wall_clock),
        ),
        "confidence": comparison.confidence,
        "matrix": matrix_view([a, b], confidence) if engines_differ else None,
        "spend": _spend_changes(comparison),
    }


def _spend_changes(comparison: RunComparison) -> dict[str, Any]:
    """The cost and agent-time changes table of the compare page."""
    return {
        "method": comparison.spend_method,
        "rows": [change_cells(c) for c in shown_changes(comparison.spend)],
        "note": unmeasured_note(comparison.spend),
    }


def _cell_activation(score: TaskScore) -> dict[str, Any] | None:
    """A matrix cell's activation figures (``None`` when the task asserts no ``activates:``)."""
    if score.activation_expected is None:
        return None
    return {
        "text": fmt.pct(score.activation_score) if score.activation_usable else "not observable",
        "counts": f"{score.activation_successes}/{score.activation_usable}",
        "interval": interval_data(score.activation_interval),
    }


def run_ref(results: RunResults) -> str:
    """``SPEC/RUN-ID``: how a shared page names a run (``caliper report`` takes it)."""
    return f"{results.meta.spec_name}/{results.meta.run_id}"


def matrix_view(
    runs: Sequence[RunResults], confidence: float = DEFAULT_CONFIDENCE
) -> dict[str, Any]:
    """Tasks down, runs across: each cell a task's score, interval and strip in that run,
    and, for a task that asserts ``activates:``, how often the expected skills loaded.

    Tasks are listed in the order they first appear; a run without a task gets an empty cell.
    """
    columns = []
    names: list[str] = []
    known: set[str] = set()
    scored = []
    tasks = [_by_name(results) for results in runs]
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
                "activation": (
                    {
                        "text": fmt.pct(run.avg_activation_score),
                        "interval": interval_data(run.activation_interval),
                    }
                    if run.asserts_activation
                    else None
                ),
            }
        )
        names += [t.name for t in results.tasks if t.name not in known]
        known.update(t.name for t in results.tasks)
    rows = []
    for name in names:
        cells = []
        for by_task, by_name in zip(tasks, scored, strict=True):
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
                    "strip": _strip(by_task.get(name)),
                    "activation": _cell_activation(score),
                }
            )
        rows.append({"name": name, "cells": cells})
    return {"columns": columns, "rows": rows}
