"""What the run page shows, as plain data built from a saved run (no HTML here).

The page's template lays this out; the attempts' details go to the browser as JSON and are
only turned into DOM when opened.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs

from caliper.plugin.attempt import Usage
from caliper.report import fmt
from caliper.report.attempt_table import attempt_kind
from caliper.report.html.spend_data import spend_rows
from caliper.report.run_view import attempt_verdict, clock_text
from caliper.report.tool_usage_view import run_tool_usage
from caliper.results.meta_labels import ablated_names, derived_sentence
from caliper.results.models import (
    TIMEOUTS_FAILURE,
    AttemptRecord,
    CheckRecord,
    Outcome,
    RunMeta,
    RunResults,
    TaskResult,
)
from caliper.results.run_clock import run_clock
from caliper.results.scoring import RunScore, TaskScore, score_run
from caliper.results.stats import DEFAULT_CONFIDENCE, interval_data


def spec_file_name(spec_path: str | None) -> str | None:
    """The spec's file name without its folder (a shared page carries no local path)."""
    if not spec_path:
        return None
    return spec_path.replace("\\", "/").rstrip("/").rpartition("/")[2] or spec_path


OUTCOME_LABELS = {
    Outcome.PASS: "pass",
    Outcome.TASK_FAIL: "task failed",
    Outcome.CHEAT: "cheat (read a forbidden file)",
    Outcome.INFRA_ERROR: "infrastructure error (not counted)",
    Outcome.TIMEOUT: "timed out (a failed attempt unless --timeouts unusable)",
    Outcome.JUDGE_ERROR: "judge error (not counted)",
    Outcome.NOT_CHECKED: "not checked (trigger probe)",
}


def engine_label(backend: str | None, model: str | None) -> str:
    """``backend:model`` as far as known."""
    return ":".join(p for p in (backend, model) if p) or "unknown engine"


def attempt_id(task_index: int, attempt_index: int) -> str:
    """The key of one attempt in the page's JSON (``t<task>-a<attempt>``, 0-based)."""
    return f"t{task_index}-a{attempt_index}"


def _summary(results: RunResults, run: RunScore) -> dict[str, Any]:
    meta = results.meta
    usable = sum(t.usable for t in run.tasks)
    successes = sum(t.successes for t in run.tasks)
    act_usable = sum(t.activation_usable for t in run.tasks)
    act_successes = sum(t.activation_successes for t in run.tasks)
    interval = run.score_interval
    usage = run.usage
    return {
        "spec_name": meta.spec_name,
        "spec_file": spec_file_name(meta.spec_path),
        "run_ref": f"{meta.spec_name}/{meta.run_id}",
        "run_id": meta.run_id,
        "started_at": meta.started_at,
        "finished_at": meta.finished_at,
        "engine": engine_label(meta.backend, meta.model),
        "judge": (
            engine_label(meta.judge_backend, meta.judge_model)
            if meta.judge_backend or meta.judge_model
            else None
        ),
        "judge_prompt_version": meta.judge_prompt_version,
        "cli_version": meta.cli_version,
        "caliper_version": meta.caliper_version,
        "plugin_versions": dict(meta.plugin_versions),
        "k": meta.k,
        "timeout": meta.timeout,
        "workers": meta.workers,
        "ablated": ablated_names(meta),
        "partial": meta.partial,
        "stop_reason": meta.stop_reason,
        "spec_hash": meta.spec_hash,
        "score": run.score,
        "score_text": fmt.pct(run.score),
        "scored_tasks": run.scored_tasks,
        "tasks": len(results.tasks),
        "pooled": {"successes": successes, "usable": usable},
        "score_interval": interval_data(run.score_interval),
        "confidence": run.confidence,
        "interval_method": interval.method if interval else None,
        "activation": run.avg_activation_score,
        "activation_text": fmt.pct(run.avg_activation_score),
        "activation_tasks": run.activation_tasks,
        "activation_pooled": {"successes": act_successes, "usable": act_usable},
        "activation_interval": interval_data(run.activation_interval),
        "asserts_activation": run.asserts_activation,
        "tokens_in": fmt.tokens(usage.tokens_in),
        "tokens_out": fmt.tokens(usage.tokens_out),
        "total_tokens": usage.total_tokens,
        "wall": fmt.duration(usage.wall_seconds),
        "wall_per_attempt": fmt.seconds(usage.wall_per_attempt),
        "wall_clock": clock_text(run_clock(meta)),
        "derived": derived_sentence(meta),
        "changes": list(meta.changes),
        "judge_tokens": fmt.tokens(usage.judge_tokens) if usage.judge_tokens else None,
        "unusable_attempts": usage.unusable_attempts,
        "unusable_tokens": fmt.tokens(usage.unusable_tokens),
        "unusable_wall": fmt.duration(usage.unusable_wall_seconds),
        "not_checked": run.not_checked,
        "neighbourhood": [attrs.asdict(s) for s in meta.skill_snapshots],
    }


_tool_input_text = json.JSONEncoder(ensure_ascii=False, default=str).encode
"""A tool call's input as JSON text, to look for skill names in (what ``json.dumps(...,
ensure_ascii=False, default=str)`` gives, with one encoder for every call instead of one
made per call)."""


def transcript_loads(record: AttemptRecord, declared: Sequence[str]) -> list[str] | None:
    """For an attempt that ended early (``infra_error``, ``timeout``) with no recorded
    activation (files saved before such attempts kept their loads): the declared skills its
    transcript shows being loaded by a skill tool or a read of their ``SKILL.md``, in order;
    ``None`` when it shows none or the attempt is not such a one."""
    if record.activated is not None or record.outcome not in (Outcome.INFRA_ERROR, Outcome.TIMEOUT):
        return None
    seen: list[str] = []
    for turn in record.transcript or []:
        if turn.role != "tool" or turn.is_error:
            continue
        text = _tool_input_text(turn.tool_input)
        tool = (turn.tool_name or "").lower()
        for name in declared:
            named = f'"{name}"' in text if "skill" in tool else f"/{name}/SKILL.md" in text
            if named and name not in seen:
                seen.append(name)
    return seen or None


def _skill_load_turns(record: AttemptRecord, seen: Sequence[str] | None = None) -> list[bool]:
    """For each transcript turn: does it load one of the skills the attempt activated (or,
    for an attempt that ended early, that its transcript shows loaded: ``seen``)?"""
    names = record.activated or seen or []
    marks = []
    for turn in record.transcript or []:
        loads = False
        if turn.role == "tool" and names:
            text = _tool_input_text(turn.tool_input)
            tool = (turn.tool_name or "").lower()
            if "skill" in tool or "SKILL.md" in text:
                loads = any(name in text for name in names)
        marks.append(loads)
    return marks


def _turn_data(turn: Any, loads_skill: bool) -> dict[str, Any]:
    data: dict[str, Any] = {"role": turn.role}
    if turn.content is not None:
        data["content"] = turn.content
    if turn.role == "tool":
        data["tool_name"] = turn.tool_name
        data["tool_input"] = turn.tool_input
        data["tool_output"] = turn.tool_output
        data["is_error"] = turn.is_error
    if loads_skill:
        data["skill_load"] = True
    return data


def _judge_data(check: CheckRecord) -> dict[str, Any]:
    """The engine that decided a check and what it spent (only the parts it recorded)."""
    data: dict[str, Any] = {}
    if check.backend is not None:
        data["judge_backend"] = check.backend
    if check.model is not None:
        data["judge_model"] = check.model
    if check.usage is not None:
        usage = check.usage
        data["judge_usage"] = {name: getattr(usage, name) for name in _USAGE_FIELDS}
    return data


_USAGE_FIELDS = tuple(field.name for field in attrs.fields(Usage))
"""A judge's usage as the page shows it: every field of :class:`Usage`, in order (the
same dict as ``attrs.asdict``, read field by field)."""


def _setup_cleanup(record: AttemptRecord) -> list[str]:
    """What the setup and cleanup scripts said (saved only when they failed)."""
    notes = []
    if record.setup_failed and record.reason:
        notes.append(record.reason)
    error = record.error or ""
    # the runner appends "; " + describe_shell_failure("cleanup", ...) to the attempt's error
    for marker in ("cleanup exited", "cleanup timed out", "cleanup was interrupted"):
        at = error.find(marker)
        if at == 0 or (at > 0 and error[at - 2 : at] == "; "):
            notes.append(error[at:])
            break
    return notes


def _verdict_text(record: AttemptRecord) -> str:
    """``activation check failed (the task's checks passed)``: what went wrong, in words."""
    return attempt_verdict(record)[2]


class AttemptDetails:
    """Each attempt's viewer data (:func:`attempt_details`), made once for every page that
    shows it: a compare page and the two run pages written beside it show the same
    attempts. The run pages read it with :meth:`of` (kept, shared: not to be changed), the
    page written last with :meth:`take` (no longer kept: its own to change)."""

    def __init__(self) -> None:
        self._made: dict[int, tuple[AttemptRecord, dict[str, Any]]] = {}

    def of(
        self, task: TaskResult, record: AttemptRecord, declared: Sequence[str]
    ) -> dict[str, Any]:
        """:func:`attempt_details` of ``record``, made on the first call for it."""
        found = self._made.get(id(record))
        if found is not None and found[0] is record:
            return found[1]
        data = attempt_details(task, record, declared)
        self._made[id(record)] = (record, data)  # the record kept: its id is not reused
        return data

    def take(
        self, task: TaskResult, record: AttemptRecord, declared: Sequence[str]
    ) -> dict[str, Any]:
        """:func:`attempt_details` of ``record``, no longer kept here: the caller's own."""
        found = self._made.pop(id(record), None)
        if found is not None and found[0] is record:
            return found[1]
        return attempt_details(task, record, declared)


def attempt_details(
    task: TaskResult, record: AttemptRecord, declared: Sequence[str] = ()
) -> dict[str, Any]:
    """Everything the transcript viewer shows for one attempt, as JSON-ready data
    (``declared``: the run's skill names, to read an early-ended attempt's loads)."""
    usage: dict[str, Any] | None = record.usage.data() if record.usage else None
    if usage is not None:
        usage["total_tokens"] = record.usage.total_tokens
    seen = transcript_loads(record, declared)
    marks = _skill_load_turns(record, seen)
    return {
        "task": task.name,
        "attempt": record.attempt,
        "outcome": record.outcome.value,
        "outcome_label": OUTCOME_LABELS[record.outcome],
        "verdict": _verdict_text(record),
        "reason": record.reason,
        "error": record.error,
        "duration": record.duration_seconds,
        "duration_text": fmt.duration(record.duration_seconds),
        "usage": usage,
        "model": record.model,
        "final_answer": record.final_answer,
        "transcript": (
            None
            if record.transcript is None
            else [_turn_data(t, m) for t, m in zip(record.transcript, marks, strict=True)]
        ),
        "activated": record.activated,
        "activated_seen": seen,
        "expected": task.activation_expected,
        "activation_passed": record.activation_passed,
        "checks": [
            {
                "key": c.key,
                "passed": c.passed,
                "reason": c.reason,
                "error": c.error,
                "judge": _judge_data(c),
            }
            for c in record.checks
        ],
        "setup_cleanup": _setup_cleanup(record),
        "setup_failed": record.setup_failed,
        "forbidden_reads": list(record.forbidden_reads),
    }


ANSWER_CHARS = 120
"""How much of an answer the attempt list shows (the viewer shows all of it)."""


def answer_preview(task: TaskResult, timeouts: str) -> tuple[str, str]:
    """The answer the list shows for a task, and which attempt it is from: the first
    failed attempt's (failures first), else the first attempt's that has one; cut to
    :data:`ANSWER_CHARS` characters on one line."""
    failed = [a for a in task.attempts if attempt_kind(a.outcome, timeouts) == "failed"]
    for record in failed + list(task.attempts):
        if record.final_answer:
            text = " ".join(record.final_answer.split())
            if len(text) > ANSWER_CHARS:
                text = text[: ANSWER_CHARS - 1] + "…"
            return text, f"answer of attempt {record.attempt}"
    return "", "no attempt recorded an answer"


def _task_row(
    index: int, task: TaskResult, score: TaskScore, timeouts: str = TIMEOUTS_FAILURE
) -> dict[str, Any]:
    attempts = []
    for j, record in enumerate(task.attempts):
        symbol, _style = fmt.STRIP_SYMBOLS[record.outcome]
        attempts.append(
            {
                "id": attempt_id(index, j),
                "number": record.attempt,
                "outcome": record.outcome.value,
                "symbol": symbol,
                "label": _verdict_text(record),
                "fired": " ".join(record.activated or []),
                "observed": record.activated is not None,
                "activation_passed": record.activation_passed,
                "kind": attempt_kind(record.outcome, timeouts),
            }
        )
    answer, answer_note = answer_preview(task, timeouts)
    return {
        "index": index,
        "name": task.name,
        "status": score.status.value,
        "successes": score.successes,
        "usable": score.usable,
        "score": score.score,
        "score_text": fmt.pct(score.score),
        "interval": interval_data(score.score_interval),
        "activation": score.activation_score,
        "activation_text": fmt.pct(score.activation_score),
        "activation_interval": interval_data(score.activation_interval),
        "expected": task.activation_expected,
        "tokens": score.usage.total_tokens,
        "tokens_text": fmt.tokens(score.usage.total_tokens),
        "wall": score.usage.wall_seconds,
        "wall_text": fmt.duration(score.usage.wall_seconds),
        "unusable": score.unusable,
        "attempts": attempts,
        "answer": answer,
        "answer_note": answer_note,
    }


def _scoreboard(run: RunScore) -> list[dict[str, Any]]:
    return [
        {
            "skill": s.skill,
            "ablated": s.ablated,
            "expected": s.expected,
            "fired": s.fired,
            "hits": s.hits,
            "recall": s.recall,
            "recall_text": fmt.pct(s.recall),
            "recall_interval": interval_data(s.recall_interval),
            "precision": s.precision,
            "precision_text": fmt.pct(s.precision),
            "precision_interval": interval_data(s.precision_interval),
        }
        for s in run.activation_per_skill
    ]


def _confusion(results: RunResults, skills: list[str]) -> list[dict[str, Any]]:
    """Per task that asserts activation: for each skill, expected or not, and how often it
    fired over the attempts where loading was observed."""
    rows = []
    for task in results.tasks:
        if task.activation_expected is None:
            continue
        observed = [a for a in task.attempts if a.activated is not None]
        cells = []
        for skill in skills:
            expected = skill in task.activation_expected
            fired = sum(1 for a in observed if skill in (a.activated or []))
            if expected:
                kind = "hit" if fired == len(observed) and observed else "miss"
            else:
                kind = "false-alarm" if fired else "quiet"
            cells.append({"skill": skill, "expected": expected, "fired": fired, "kind": kind})
        rows.append({"task": task.name, "observed": len(observed), "cells": cells})
    return rows


def run_view(
    results: RunResults,
    confidence: float = DEFAULT_CONFIDENCE,
    details: AttemptDetails | None = None,
) -> dict[str, Any]:
    """The whole run page as data: summary, task rows, scoreboard, confusion, attempt details
    (from ``details`` when given, so pages written together make each attempt's once).

    Every interval is the one :mod:`caliper.results.scoring` derives, at ``confidence``.
    """
    run = score_run(results, confidence)
    timeouts = results.meta.timeouts
    pairs = enumerate(zip(results.tasks, run.tasks, strict=True))
    rows = [_task_row(i, t, s, timeouts) for i, (t, s) in pairs]
    board = _scoreboard(run)
    skills = [s["skill"] for s in board]
    fired = sorted({name for t in results.tasks for a in t.attempts for name in a.activated or []})
    outcomes = [
        o.value for o in Outcome if any(a.outcome is o for t in results.tasks for a in t.attempts)
    ]
    declared = [snapshot.name for snapshot in results.meta.skill_snapshots]
    made = details.of if details is not None else attempt_details
    viewed = {
        attempt_id(i, j): made(task, record, declared)
        for i, task in enumerate(results.tasks)
        for j, record in enumerate(task.attempts)
    }
    return {
        "summary": _summary(results, run),
        "tasks": rows,
        "scoreboard": board,
        "confusion": _confusion(results, skills),
        "skills": skills,
        "fired_skills": fired,
        "outcomes": [(o, OUTCOME_LABELS[Outcome(o)]) for o in outcomes],
        "attempts": viewed,
        "attempt_count": len(viewed),
        "spend": spend_rows(results, confidence),
        "tool_usage": run_tool_usage(results).data(),
    }


def meta_line(meta: RunMeta) -> str:
    """``spec — engine — run id`` for page titles."""
    return f"{meta.spec_name} — {engine_label(meta.backend, meta.model)} — {meta.run_id}"
