"""Diffing two saved runs task by task. Pure: takes two :class:`RunResults`, returns data.

``a`` is *before* and ``b`` is *after*; every delta is after − before. A change counts only
when a test supports it at the chosen level (``alpha = 1 − confidence``), by a fixed-sequence
(gatekeeping) procedure: the whole run is tested first at the full level, and only when it
rejects are the matched tasks tested, with Holm's correction over the tasks (one matched task:
the whole run is that task). The chance of any false call, whole run or task, stays ≤ alpha:

* per task, Fisher's exact test on the two binomial samples, with Newcombe's interval for Δ
  (continuity-corrected);
* the whole run, an exact stratified permutation test paired by task, with the paired
  task-mean interval for Δ.

Every Δ interval is made to agree with its verdict: it holds 0 exactly when the verdict's own
test (after the correction) does not reject.

A supported drop of the success score is a *regression* (``has_regression``); the same for
activation sets ``has_activation_regression``. Tokens and the wall clock are reported beside
and never tested; cost and agent time per attempt are tested
(:mod:`caliper.results.compare_spend`) but never make a regression. Each side's state
(complete, partial, never started) says whether the pair is comparable at all.
"""

from __future__ import annotations

from typing import Any

import attrs

from caliper.results import power as power_mod
from caliper.results.compare_spend import METHOD as SPEND_METHOD
from caliper.results.compare_spend import SpendChange, compare_spend
from caliper.results.legacy import LEGACY_NAME, LEGACY_SCHEMA
from caliper.results.meta_labels import (
    SETUP_KINDS,
    ablated_names,
    derived_sentence,
    user_setup_label,
)
from caliper.results.models import Outcome, RunMeta, RunResults, SkillSnapshot
from caliper.results.run_clock import run_clock
from caliper.results.scoring import (
    TaskScore,
    UsageTotals,
    left_out_outcomes,
    mean,
    score_run,
    scored_outcomes,
)
from caliper.results.significance import (
    fisher_exact,
    gatekept_adjust,
    stratified_exact_test,
)
from caliper.results.stats import (
    DEFAULT_CONFIDENCE,
    Interval,
    agree_with_test,
    check_confidence,
    interval_data,
    mean_rate_interval,
    newcombe_cc_difference_interval,
    paired_mean_difference_interval,
)
from caliper.system import attrs_classes

EPSILON = 1e-9
CORRECTION = "gatekeeping-holm"

# TaskComparison.verdict / activation_verdict and RunComparison.overall_verdict
REGRESSED = "regressed"
IMPROVED = "improved"
NOT_SIGNIFICANT = "not significant"
NO_CHANGE = "no change"
UNMEASURED = "unmeasured"

# SideState.state
COMPLETE = "complete"
PARTIAL = "partial"
NEVER_STARTED = "never started"


@attrs_classes.frozen
class TaskComparison:
    """One task present in both runs.

    ``delta_interval`` is Newcombe's continuity-corrected interval of ``delta``, made to hold
    0 exactly when ``verdict`` is not a supported change; ``p_value`` Fisher's exact
    two-sided p and ``p_adjusted`` the same after Holm's correction. ``verdict`` is one of
    ``regressed``, ``improved`` (a supported change), ``not significant``, ``no change`` or
    ``unmeasured``; ``regression`` is ``verdict == "regressed"``. The ``activation_*``
    fields are the same for the activation rate.
    """

    name: str
    a_status: str
    b_status: str
    a_score: float | None
    b_score: float | None
    delta: float | None
    regression: bool
    a_outcomes: list[str]
    b_outcomes: list[str]
    a_activation: float | None
    b_activation: float | None
    activation_delta: float | None
    activation_regression: bool
    a_tokens: int | None
    b_tokens: int | None
    a_wall: float | None
    b_wall: float | None
    a_successes: int = 0
    a_usable: int = 0
    b_successes: int = 0
    b_usable: int = 0
    a_interval: Interval | None = None
    b_interval: Interval | None = None
    delta_interval: Interval | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    verdict: str = UNMEASURED
    activation_delta_interval: Interval | None = None
    activation_p_value: float | None = None
    activation_p_adjusted: float | None = None
    activation_verdict: str = UNMEASURED


@attrs_classes.frozen
class SideState:
    """Whether one side of a pair can be compared.

    ``state`` is ``complete``, ``partial`` (the run stopped early: Ctrl-C, a signal, a login
    or setup failure; ``reason`` says why) or ``never started`` (not one attempt gave a
    verdict, so nothing was measured). Only two complete sides are comparable without
    ``--allow-partial``.
    """

    state: str
    reason: str | None
    usable_attempts: int

    @property
    def complete(self) -> bool:
        """True when the side ran to the end and measured something."""
        return self.state == COMPLETE

    @property
    def phrase(self) -> str:
        """``is partial`` / ``never started`` / ``is complete``, for sentences."""
        return "never started" if self.state == NEVER_STARTED else f"is {self.state}"


@attrs_classes.frozen
class Sensitivity:
    """How small a drop this pair could have detected (with chance ``power`` at ``level``).

    ``task_drop``: the smallest drop of one task alone that its test (Fisher, at Holm's first
    step ``alpha / tests`` over the ``tests`` tasks) catches, at the pair's attempts per task;
    ``overall_drop``: the smallest drop on every task that the whole-run test catches. Both
    from ``baseline`` (the before side's rate over matched tasks, held to [0.5, 0.95]);
    ``None`` means no drop at all would be caught. ``k_needed`` is the k (both sides) at which
    the whole-run test would catch a drop of ``target_drop`` on every task (``None`` past
    1000).
    """

    level: float
    power: float
    tasks: int
    tests: int
    a_attempts: float
    b_attempts: float
    baseline: float
    task_drop: float | None
    overall_drop: float | None
    target_drop: float
    k_needed: int | None


@attrs_classes.frozen
class SkillDrift:
    """A neighbourhood member whose text differs between the runs.

    ``a_ref``/``b_ref`` are the git commit for a git source, else the content hash.
    ``warn`` is true for a git source: the spec named where its bytes come from, yet they moved.
    """

    name: str
    source_kind: str
    a_ref: str | None
    b_ref: str | None
    warn: bool


@attrs_classes.frozen
class UsageDelta:
    """Before/after tokens and time (secondary; never a regression).

    ``a_tokens``/``b_tokens`` and ``a_wall``/``b_wall`` are totals (tokens, and the agent
    time: the sum of attempt durations), with their deltas. Runs of a different k make totals
    unlike, so the views compare the per-attempt figures: ``*_tokens_per_attempt`` and
    ``*_agent_per_attempt`` with their deltas. ``*_wall_clock`` is each run's start-to-end
    time (:mod:`caliper.results.run_clock`), shown beside and never turned into a percentage.
    """

    a_tokens: int | None
    b_tokens: int | None
    tokens_delta: int | None
    tokens_delta_pct: float | None
    a_wall: float | None
    b_wall: float | None
    wall_delta: float | None
    wall_delta_pct: float | None
    a_tokens_per_attempt: float | None = None
    b_tokens_per_attempt: float | None = None
    tokens_per_attempt_delta: float | None = None
    tokens_per_attempt_delta_pct: float | None = None
    a_agent_per_attempt: float | None = None
    b_agent_per_attempt: float | None = None
    agent_per_attempt_delta: float | None = None
    agent_per_attempt_delta_pct: float | None = None
    a_wall_clock: float | None = None
    b_wall_clock: float | None = None


@attrs_classes.frozen
class RunComparison:
    """Everything ``caliper compare`` shows (and writes with ``--format json``).

    ``a_overall``/``b_overall`` are the mean scores over tasks measured on both sides, with
    their intervals; ``delta_interval`` is the paired interval of ``delta`` and ``p_value``
    the stratified test's two-sided p (``p_adjusted`` after Holm, together with the tasks).
    ``overall_regression`` is a supported drop of the whole; ``has_regression`` is it or any
    task's. ``ablation`` names the skills only ``a`` left out (the pair measures what they
    add); ``ablation_removed`` those only ``b`` left out (what removing them costs).
    ``a_side``/``b_side`` say whether each side is complete; ``comparable`` is both.
    """

    spec_name: str
    title: str
    a_run_id: str
    b_run_id: str
    a_path: str | None
    b_path: str | None
    k: int
    tasks: list[TaskComparison]
    only_in_a: list[str]
    only_in_b: list[str]
    matched_measured: int
    a_overall: float | None
    b_overall: float | None
    delta: float | None
    has_regression: bool
    has_activation_regression: bool
    usage: UsageDelta
    a_usage: UsageTotals
    b_usage: UsageTotals
    warnings: list[str]
    skill_drift: list[SkillDrift]
    confidence: float = DEFAULT_CONFIDENCE
    alpha: float = 1.0 - DEFAULT_CONFIDENCE
    correction: str = CORRECTION
    a_overall_interval: Interval | None = None
    b_overall_interval: Interval | None = None
    delta_interval: Interval | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    overall_verdict: str = UNMEASURED
    overall_regression: bool = False
    activation_matched: int = 0
    a_activation_overall: float | None = None
    b_activation_overall: float | None = None
    activation_delta: float | None = None
    activation_delta_interval: Interval | None = None
    activation_p_value: float | None = None
    activation_p_adjusted: float | None = None
    activation_overall_verdict: str = UNMEASURED
    activation_overall_regression: bool = False
    a_side: SideState = SideState(COMPLETE, None, 0)
    b_side: SideState = SideState(COMPLETE, None, 0)
    comparable: bool = True
    ablation: str | None = None
    ablation_removed: str | None = None
    sensitivity: Sensitivity | None = None
    spend: list[SpendChange] = attrs.field(factory=list)
    """Cost and agent-time changes (:mod:`caliper.results.compare_spend`), each measure its
    own gatekept family; never a regression."""
    spend_method: str = SPEND_METHOD


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


def _pct(a: float | None, delta: float | None) -> float | None:
    return None if not a or delta is None else delta / a


def _compare_task(
    a: TaskScore, b: TaskScore, a_out: list[str], b_out: list[str], confidence: float
) -> TaskComparison:
    delta = _delta(a.score, b.score)
    act_delta = _delta(a.activation_score, b.activation_score)
    return TaskComparison(
        name=a.name,
        a_status=a.status.value,
        b_status=b.status.value,
        a_score=a.score,
        b_score=b.score,
        delta=delta,
        regression=False,
        a_outcomes=a_out,
        b_outcomes=b_out,
        a_activation=a.activation_score,
        b_activation=b.activation_score,
        activation_delta=act_delta,
        activation_regression=False,
        a_tokens=a.usage.total_tokens,
        b_tokens=b.usage.total_tokens,
        a_wall=a.usage.wall_seconds,
        b_wall=b.usage.wall_seconds,
        a_successes=a.successes,
        a_usable=a.usable,
        b_successes=b.successes,
        b_usable=b.usable,
        a_interval=a.score_interval,
        b_interval=b.score_interval,
        delta_interval=newcombe_cc_difference_interval(
            a.successes, a.usable, b.successes, b.usable, confidence
        ),
        activation_delta_interval=newcombe_cc_difference_interval(
            a.activation_successes,
            a.activation_usable,
            b.activation_successes,
            b.activation_usable,
            confidence,
        ),
    )


def verdict_for(delta: float | None, p_adjusted: float | None, alpha: float) -> str:
    """``regressed``/``improved`` when ``p_adjusted <= alpha``, else ``not significant`` (or
    ``no change`` when Δ is 0, ``unmeasured`` when there is no test)."""
    if delta is None or p_adjusted is None:
        return UNMEASURED
    if abs(delta) <= EPSILON:
        return NO_CHANGE
    if p_adjusted <= alpha:
        return REGRESSED if delta < 0 else IMPROVED
    return NOT_SIGNIFICANT


def _agreeing(interval: Interval | None, delta: float | None, verdict: str) -> Interval | None:
    """The Δ interval shown beside ``verdict``: holds 0 exactly when the verdict's test does
    not reject (see :func:`caliper.results.stats.agree_with_test`)."""
    if interval is None or delta is None or verdict == UNMEASURED:
        return interval
    return agree_with_test(interval, delta, verdict in (REGRESSED, IMPROVED))


@attrs_classes.frozen
class _Family:
    """One family of tests (success or activation): the whole run first, then the tasks with
    Holm's correction within it; ``tests`` is the number of per-task tests Holm covers."""

    task_p: dict[str, float]
    task_adjusted: dict[str, float]
    overall_p: float | None
    overall_adjusted: float | None
    overall_interval: Interval | None
    tests: int


def _family(pairs: dict[str, tuple[int, int, int, int]], confidence: float) -> _Family:
    """The stratified test of the whole first, at the full level, then Fisher per task,
    Holm-adjusted over the tasks, within it (one task: the whole is that task)."""
    names = [name for name in pairs]
    p_values = [fisher_exact(*pairs[name]) for name in names]
    overall_p = overall_interval = None
    if len(names) == 1:
        overall_p = p_values[0]
        overall_interval = newcombe_cc_difference_interval(*pairs[names[0]], confidence=confidence)
        task_adjusted = {names[0]: overall_p}
    elif names:
        overall_p = stratified_exact_test([pairs[n] for n in names])
        overall_interval = paired_mean_difference_interval([pairs[n] for n in names], confidence)
        _, adjusted = gatekept_adjust(overall_p, p_values)
        task_adjusted = dict(zip(names, adjusted, strict=True))
    else:
        task_adjusted = {}
    return _Family(
        dict(zip(names, p_values, strict=True)),
        task_adjusted,
        overall_p,
        overall_p,
        overall_interval,
        len(names),
    )


def _per_attempt(usage: UsageTotals) -> float | None:
    total = usage.total_tokens
    return total / usage.attempts if total is not None and usage.attempts else None


def _usage_delta(a: UsageTotals, b: UsageTotals, a_meta: RunMeta, b_meta: RunMeta) -> UsageDelta:
    tokens = _delta(a.total_tokens, b.total_tokens)
    wall = _delta(a.wall_seconds, b.wall_seconds)
    a_tpa, b_tpa = _per_attempt(a), _per_attempt(b)
    tpa = _delta(a_tpa, b_tpa)
    agent = _delta(a.wall_per_attempt, b.wall_per_attempt)
    return UsageDelta(
        a_tokens=a.total_tokens,
        b_tokens=b.total_tokens,
        tokens_delta=None if tokens is None else int(tokens),
        tokens_delta_pct=_pct(a.total_tokens, tokens),
        a_wall=a.wall_seconds,
        b_wall=b.wall_seconds,
        wall_delta=wall,
        wall_delta_pct=_pct(a.wall_seconds, wall),
        a_tokens_per_attempt=a_tpa,
        b_tokens_per_attempt=b_tpa,
        tokens_per_attempt_delta=tpa,
        tokens_per_attempt_delta_pct=_pct(a_tpa, tpa),
        a_agent_per_attempt=a.wall_per_attempt,
        b_agent_per_attempt=b.wall_per_attempt,
        agent_per_attempt_delta=agent,
        agent_per_attempt_delta_pct=_pct(a.wall_per_attempt, agent),
        a_wall_clock=run_clock(a_meta).seconds,
        b_wall_clock=run_clock(b_meta).seconds,
    )


def _setup_key(meta: RunMeta) -> tuple[bool, tuple[tuple[str, ...], ...]]:
    return meta.user_customizations, tuple(
        tuple(sorted(meta.user_setup.get(kind, ()))) for kind in SETUP_KINDS
    )


def _side_label(meta: RunMeta) -> str:
    ablated = ablated_names(meta)
    return f"without {', '.join(ablated)}" if ablated else "full neighbourhood"


def title_for(a: RunMeta, b: RunMeta) -> str:
    """``without X → full neighbourhood`` for an ablation pair, else ``run-a → run-b``."""
    if ablated_names(a) != ablated_names(b) and a.spec_name == b.spec_name:
        return f"{_side_label(a)} → {_side_label(b)}"
    return f"{a.run_id} → {b.run_id}"


def _ref(snapshot: SkillSnapshot) -> str | None:
    if snapshot.source_kind == "git" and snapshot.git_sha:
        return snapshot.git_sha
    return snapshot.content_hash


def skill_drift(a: RunMeta, b: RunMeta) -> list[SkillDrift]:
    """Members present in both runs whose source text changed."""
    b_by_name = {s.name: s for s in b.skill_snapshots}
    drift = []
    for old in a.skill_snapshots:
        new = b_by_name.get(old.name)
        if new is None:
            continue
        a_ref, b_ref = _ref(old), _ref(new)
        if a_ref and b_ref and a_ref != b_ref:
            kind = new.source_kind
            drift.append(SkillDrift(old.name, kind, a_ref, b_ref, warn=kind == "git"))
    return drift


def _engine(backend: str | None, model: str | None) -> str:
    return ":".join(p for p in (backend, model) if p) or "unknown"


def meta_warnings(a: RunMeta, b: RunMeta) -> list[str]:
    """What differs between the runs besides the skills under test (each a sentence)."""
    warnings = []
    for side, meta in (("before", a), ("after", b)):
        derived = derived_sentence(meta)
        if derived:
            warnings.append(f"{side} ({meta.run_id}): {derived.rstrip('.')}")
    if a.spec_name != b.spec_name:
        warnings.append(f"different specs: {a.spec_name} → {b.spec_name}")
    elif a.spec_hash and b.spec_hash and a.spec_hash != b.spec_hash:
        warnings.append("the spec file changed between the runs (its hash differs)")
    if a.k != b.k:
        warnings.append(f"different k: {a.k} → {b.k}; rates rest on different sample sizes")
    a_names = [s.name for s in a.skill_snapshots]
    b_names = [s.name for s in b.skill_snapshots]
    added = [n for n in b_names if n not in a_names]
    removed = [n for n in a_names if n not in b_names]
    if added or removed:
        parts = [f"added {', '.join(added)}"] if added else []
        parts += [f"removed {', '.join(removed)}"] if removed else []
        warnings.append(f"the neighbourhood changed: {'; '.join(parts)}")
    if ablated_names(a) != ablated_names(b):
        warnings.append(f"ablation differs: {_side_label(a)} → {_side_label(b)}")
    if _setup_key(a) != _setup_key(b):
        warnings.append(
            f"different user setups loaded: {user_setup_label(a)} → {user_setup_label(b)}"
        )
    if (a.user_customizations or b.user_customizations) and a.backend != b.backend:
        warnings.append(
            f"backends compared with your own setup loaded ({a.backend} → {b.backend}): each "
            "CLI loads a different user setup, so the difference is not only the agent"
        )
    for label, before, after in (
        ("engine", _engine(a.backend, a.model), _engine(b.backend, b.model)),
        ("judge", _engine(a.judge_backend, a.judge_model), _engine(b.judge_backend, b.judge_model)),
        ("agent CLI version", a.cli_version or "unknown", b.cli_version or "unknown"),
    ):
        if before != after:
            warnings.append(f"different {label}: {before} → {after}")

    legacy = [side for side, meta in (("A", a), ("B", b)) if meta.schema_version == LEGACY_SCHEMA]
    if len(legacy) == 1:
        warnings.append(
            f"{legacy[0]} was run by {LEGACY_NAME}: a different harness installed, ran and "
            "judged it, so part of the difference may be the tool"
        )
    for drift in skill_drift(a, b):
        if drift.warn:
            warnings.append(
                f"{drift.name} changed between runs (git source, {_short(drift.a_ref)} → "
                f"{_short(drift.b_ref)}); pin `ref:` to hold it fixed"
            )
    return warnings


def unusable_rate_warning(a: RunResults, b: RunResults, alpha: float) -> str | None:
    """A sentence when the share of attempts left out of the rates (infra and judge errors,
    and timeouts under ``--timeouts unusable``) differs between the sides by more than noise
    explains: the stratified exact test, paired by task, over every task on both sides."""
    b_tasks = {t.name: t for t in b.tasks}
    a_left_out, b_left_out = left_out_outcomes(a.meta.timeouts), left_out_outcomes(b.meta.timeouts)
    pairs = []
    for task in a.tasks:
        other = b_tasks.get(task.name)
        if other is None or not task.attempts or not other.attempts:
            continue
        pairs.append(
            (
                sum(r.outcome in a_left_out for r in task.attempts),
                len(task.attempts),
                sum(r.outcome in b_left_out for r in other.attempts),
                len(other.attempts),
            )
        )
    a_out, a_all = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
    b_out, b_all = sum(p[2] for p in pairs), sum(p[3] for p in pairs)
    if not pairs or a_out * b_all == b_out * a_all:
        return None
    p = stratified_exact_test(pairs)
    if p > alpha:
        return None
    return (
        f"unusable attempts differ: {a_out}/{a_all} → {b_out}/{b_all} left out of the rates "
        f"(p={p:.2g}); the rates compare only what was measured, so check the errors"
    )


def _timeout_warning(a: RunMeta, b: RunMeta) -> str | None:
    if a.timeouts == b.timeouts:
        return None
    return (
        f"timeouts are scored differently: {a.timeouts} → {b.timeouts} (--timeouts); "
        "the rates do not count the same attempts"
    )


def _short(ref: str | None) -> str:
    return (ref or "?")[:7]


def same_run(a: RunResults, b: RunResults) -> bool:
    """True when both sides are the same saved run."""
    return a.meta.spec_name == b.meta.spec_name and a.meta.run_id == b.meta.run_id


def side_state(results: RunResults) -> SideState:
    """Whether ``results`` can be one side of a comparison (see :class:`SideState`)."""
    attempts = [a for t in results.tasks for a in t.attempts]
    scored = frozenset(scored_outcomes(results.meta.timeouts))
    usable = sum(1 for a in attempts if a.outcome in scored)
    measured = usable + sum(1 for a in attempts if a.outcome is Outcome.NOT_CHECKED)
    if measured == 0:
        reason = results.meta.stop_reason
        if reason is None:
            reason = (
                "no attempt ran"
                if not attempts
                else f"all {len(attempts)} attempt(s) were unusable (infra_error, "
                "judge_error or, under --timeouts unusable, timeout)"
            )
        return SideState(NEVER_STARTED, reason, 0)
    if results.meta.partial:
        return SideState(PARTIAL, results.meta.stop_reason or "the run stopped early", usable)
    return SideState(COMPLETE, None, usable)


def _ablation_sentence(a: RunMeta, b: RunMeta) -> str | None:
    """Who is measured by an ablation pair: ``"my-skill"`` when only ``a`` left skills out."""
    a_out, b_out = ablated_names(a), ablated_names(b)
    if a.spec_name != b.spec_name or a_out == b_out:
        return None
    if set(b_out) < set(a_out):
        return ", ".join(n for n in a_out if n not in b_out)
    return None


def _sensitivity(
    rows: list[TaskComparison], tests: int, alpha: float, confidence: float
) -> Sensitivity | None:
    measured = [r for r in rows if r.a_usable and r.b_usable]
    if not measured:
        return None
    tasks = len(measured)
    a_k = sum(r.a_usable for r in measured) / tasks
    b_k = sum(r.b_usable for r in measured) / tasks
    before = sum(r.a_successes for r in measured) / sum(r.a_usable for r in measured)
    baseline = round(min(0.95, max(0.5, before)), 2)
    task_alpha = power_mod.family_alpha(alpha, tests)
    overall_alpha = alpha  # the whole-run test comes first, at the full level
    task_drop = power_mod.task_detectable_drop(
        round(a_k), round(b_k), task_alpha, baseline=baseline
    )
    overall_drop = power_mod.overall_detectable_drop(
        tasks, a_k, b_k, overall_alpha, baseline=baseline
    )
    drops = [-r.delta for r in measured if r.delta is not None and r.delta < -EPSILON]
    target = round(max(drops), 2) if drops else 0.2
    target = min(max(target, 0.05), baseline)
    return Sensitivity(
        level=confidence,
        power=power_mod.DEFAULT_POWER,
        tasks=tasks,
        tests=tests,
        a_attempts=a_k,
        b_attempts=b_k,
        baseline=baseline,
        task_drop=task_drop,
        overall_drop=overall_drop,
        target_drop=target,
        k_needed=power_mod.attempts_needed(target, tasks, overall_alpha, baseline=baseline),
    )


def _task_rows(
    a: RunResults,
    b: RunResults,
    a_tasks: dict[str, TaskScore],
    b_tasks: dict[str, TaskScore],
    confidence: float,
) -> list[TaskComparison]:
    """One row, not yet judged, per task both runs hold (in ``a``'s order)."""
    a_outs = {t.name: [r.outcome.value for r in t.attempts] for t in a.tasks}
    b_outs = {t.name: [r.outcome.value for r in t.attempts] for t in b.tasks}
    return [
        _compare_task(a_tasks[name], b_tasks[name], a_outs[name], b_outs[name], confidence)
        for name in a_tasks
        if name in b_tasks
    ]


def _score_pairs(rows: list[TaskComparison]) -> dict[str, tuple[int, int, int, int]]:
    """``(a successes, a usable, b successes, b usable)`` of each task measured on both sides."""
    return {
        r.name: (r.a_successes, r.a_usable, r.b_successes, r.b_usable)
        for r in rows
        if r.a_usable and r.b_usable
    }


def _activation_pairs(
    rows: list[TaskComparison], a_tasks: dict[str, TaskScore], b_tasks: dict[str, TaskScore]
) -> dict[str, tuple[int, int, int, int]]:
    """The activation counts, as in :func:`_score_pairs`, of each task whose skill activation
    was measured on both sides."""
    act_pairs = {}
    for r in rows:
        ta, tb = a_tasks[r.name], b_tasks[r.name]
        if ta.activation_usable and tb.activation_usable:
            act_pairs[r.name] = (
                ta.activation_successes,
                ta.activation_usable,
                tb.activation_successes,
                tb.activation_usable,
            )
    return act_pairs


def _judge_task(
    r: TaskComparison, score_family: _Family, act_family: _Family, alpha: float
) -> TaskComparison:
    """The task row ``r`` with its p-values, verdicts and the intervals that agree with them."""
    p_adj = score_family.task_adjusted.get(r.name)
    act_adj = act_family.task_adjusted.get(r.name)
    verdict = verdict_for(r.delta, p_adj, alpha)
    act_verdict = verdict_for(r.activation_delta, act_adj, alpha)
    return attrs.evolve(
        r,
        delta_interval=_agreeing(r.delta_interval, r.delta, verdict),
        activation_delta_interval=_agreeing(
            r.activation_delta_interval, r.activation_delta, act_verdict
        ),
        p_value=score_family.task_p.get(r.name),
        p_adjusted=p_adj,
        verdict=verdict,
        regression=verdict == REGRESSED,
        activation_p_value=act_family.task_p.get(r.name),
        activation_p_adjusted=act_adj,
        activation_verdict=act_verdict,
        activation_regression=act_verdict == REGRESSED,
    )


def _overall_fields(
    rows: list[TaskComparison],
    score_pairs: dict[str, tuple[int, int, int, int]],
    score_family: _Family,
    alpha: float,
    confidence: float,
) -> dict[str, Any]:
    """The whole-run success fields of :class:`RunComparison` (means, Δ, intervals, test and
    verdict) over the tasks measured on both sides."""
    measured = [r for r in rows if r.name in score_pairs]
    a_overall = mean(r.a_score for r in measured)
    b_overall = mean(r.b_score for r in measured)
    delta = _delta(a_overall, b_overall)
    overall_verdict = verdict_for(delta, score_family.overall_adjusted, alpha)
    return {
        "matched_measured": len(measured),
        "a_overall": a_overall,
        "b_overall": b_overall,
        "delta": delta,
        "a_overall_interval": mean_rate_interval(
            [(r.a_successes, r.a_usable) for r in measured], confidence
        ),
        "b_overall_interval": mean_rate_interval(
            [(r.b_successes, r.b_usable) for r in measured], confidence
        ),
        "delta_interval": _agreeing(score_family.overall_interval, delta, overall_verdict),
        "p_value": score_family.overall_p,
        "p_adjusted": score_family.overall_adjusted,
        "overall_verdict": overall_verdict,
        "overall_regression": overall_verdict == REGRESSED,
    }


def _activation_fields(
    rows: list[TaskComparison],
    act_pairs: dict[str, tuple[int, int, int, int]],
    act_family: _Family,
    alpha: float,
) -> dict[str, Any]:
    """The whole-run activation fields of :class:`RunComparison` over the tasks whose
    activation was measured on both sides."""
    act_rows = [r for r in rows if r.name in act_pairs]
    a_act = mean(r.a_activation for r in act_rows)
    b_act = mean(r.b_activation for r in act_rows)
    act_delta = _delta(a_act, b_act)
    act_verdict = verdict_for(act_delta, act_family.overall_adjusted, alpha)
    return {
        "activation_matched": len(act_rows),
        "a_activation_overall": a_act,
        "b_activation_overall": b_act,
        "activation_delta": act_delta,
        "activation_delta_interval": _agreeing(act_family.overall_interval, act_delta, act_verdict),
        "activation_p_value": act_family.overall_p,
        "activation_p_adjusted": act_family.overall_adjusted,
        "activation_overall_verdict": act_verdict,
        "activation_overall_regression": act_verdict == REGRESSED,
    }


def _comparison_warnings(a: RunResults, b: RunResults, alpha: float) -> list[str]:
    """The warnings shown above a comparison: setups that differ, timeouts, unusable rates."""
    return [
        *meta_warnings(a.meta, b.meta),
        *(w for w in (_timeout_warning(a.meta, b.meta),) if w),
        *(w for w in (unusable_rate_warning(a, b, alpha),) if w),
    ]


def compare_runs(
    a: RunResults,
    b: RunResults,
    *,
    a_path: str | None = None,
    b_path: str | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
) -> RunComparison:
    """Compare run ``a`` (before) with run ``b`` (after) at ``confidence``. Callers refuse
    ``same_run`` pairs."""
    check_confidence(confidence)
    alpha = 1.0 - confidence
    a_score, b_score = score_run(a, confidence), score_run(b, confidence)
    a_tasks = {t.name: t for t in a_score.tasks}
    b_tasks = {t.name: t for t in b_score.tasks}
    rows = _task_rows(a, b, a_tasks, b_tasks, confidence)
    score_pairs = _score_pairs(rows)
    act_pairs = _activation_pairs(rows, a_tasks, b_tasks)
    score_family = _family(score_pairs, confidence)
    act_family = _family(act_pairs, confidence)
    rows = [_judge_task(r, score_family, act_family, alpha) for r in rows]
    overall = _overall_fields(rows, score_pairs, score_family, alpha, confidence)
    activation = _activation_fields(rows, act_pairs, act_family, alpha)
    a_side, b_side = side_state(a), side_state(b)
    return RunComparison(
        spec_name=b.meta.spec_name,
        title=title_for(a.meta, b.meta),
        a_run_id=a.meta.run_id,
        b_run_id=b.meta.run_id,
        a_path=a_path,
        b_path=b_path,
        k=b.meta.k,
        tasks=rows,
        only_in_a=[n for n in a_tasks if n not in b_tasks],
        only_in_b=[n for n in b_tasks if n not in a_tasks],
        has_regression=overall["overall_regression"] or any(r.regression for r in rows),
        has_activation_regression=(
            activation["activation_overall_regression"]
            or any(r.activation_regression for r in rows)
        ),
        usage=_usage_delta(a_score.usage, b_score.usage, a.meta, b.meta),
        a_usage=a_score.usage,
        b_usage=b_score.usage,
        warnings=_comparison_warnings(a, b, alpha),
        skill_drift=skill_drift(a.meta, b.meta),
        confidence=confidence,
        alpha=alpha,
        a_side=a_side,
        b_side=b_side,
        comparable=a_side.complete and b_side.complete,
        ablation=_ablation_sentence(a.meta, b.meta),
        ablation_removed=_ablation_sentence(b.meta, a.meta),
        sensitivity=_sensitivity(rows, score_family.tests, alpha, confidence),
        spend=compare_spend(a, b, alpha),
        **overall,
        **activation,
    )


def comparison_data(comparison: RunComparison) -> dict:
    """``comparison`` as plain data for ``caliper compare --format json``."""
    data = attrs.asdict(comparison, value_serializer=_serialize)
    for key in ("a_usage", "b_usage"):
        usage: UsageTotals = getattr(comparison, key)
        data[key]["total_tokens"] = usage.total_tokens
    for key in ("a_side", "b_side"):
        data[key]["complete"] = getattr(comparison, key).complete
    return data


def _serialize(_instance, _field, value):
    if isinstance(value, Interval):
        return interval_data(value)
    return value
