"""Diffing two saved runs task by task. Pure: takes two :class:`RunResults`, returns data.

``a`` is *before* and ``b`` is *after*; every delta is after − before. Only the success score
can be a regression, and only on a task measured on both sides. Activation, tokens and wall
time are reported beside it and never feed ``has_regression``.
"""

from __future__ import annotations

import attrs

from caliper.results.models import RunMeta, RunResults, SkillSnapshot
from caliper.results.scoring import TaskScore, UsageTotals, mean, score_run

EPSILON = 1e-9


@attrs.frozen
class TaskComparison:
    """One task present in both runs."""

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


@attrs.frozen
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


@attrs.frozen
class UsageDelta:
    """Before/after totals of tokens and wall time (secondary; never a regression)."""

    a_tokens: int | None
    b_tokens: int | None
    tokens_delta: int | None
    tokens_delta_pct: float | None
    a_wall: float | None
    b_wall: float | None
    wall_delta: float | None
    wall_delta_pct: float | None


@attrs.frozen
class RunComparison:
    """Everything ``caliper compare`` shows (and writes with ``--format json``)."""

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


def _delta(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else b - a


def _pct(a: float | None, delta: float | None) -> float | None:
    return None if not a or delta is None else delta / a


def _compare_task(a: TaskScore, b: TaskScore, a_out: list[str], b_out: list[str]) -> TaskComparison:
    delta = _delta(a.score, b.score)
    act_delta = _delta(a.activation_score, b.activation_score)
    return TaskComparison(
        name=a.name,
        a_status=a.status.value,
        b_status=b.status.value,
        a_score=a.score,
        b_score=b.score,
        delta=delta,
        regression=delta is not None and delta < -EPSILON,
        a_outcomes=a_out,
        b_outcomes=b_out,
        a_activation=a.activation_score,
        b_activation=b.activation_score,
        activation_delta=act_delta,
        activation_regression=act_delta is not None and act_delta < -EPSILON,
        a_tokens=a.usage.total_tokens,
        b_tokens=b.usage.total_tokens,
        a_wall=a.usage.wall_seconds,
        b_wall=b.usage.wall_seconds,
    )


def _usage_delta(a: UsageTotals, b: UsageTotals) -> UsageDelta:
    tokens = _delta(a.total_tokens, b.total_tokens)
    wall = _delta(a.wall_seconds, b.wall_seconds)
    return UsageDelta(
        a_tokens=a.total_tokens,
        b_tokens=b.total_tokens,
        tokens_delta=None if tokens is None else int(tokens),
        tokens_delta_pct=_pct(a.total_tokens, tokens),
        a_wall=a.wall_seconds,
        b_wall=b.wall_seconds,
        wall_delta=wall,
        wall_delta_pct=_pct(a.wall_seconds, wall),
    )


def ablated_names(meta: RunMeta) -> list[str]:
    """Skills left out of a run (``--ablate``), from the flags and the snapshots."""
    names = list(meta.ablated)
    names += [s.name for s in meta.skill_snapshots if s.ablated and s.name not in names]
    return names


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
    for label, before, after in (
        ("engine", _engine(a.backend, a.model), _engine(b.backend, b.model)),
        ("judge", _engine(a.judge_backend, a.judge_model), _engine(b.judge_backend, b.judge_model)),
        ("agent CLI version", a.cli_version or "unknown", b.cli_version or "unknown"),
    ):
        if before != after:
            warnings.append(f"different {label}: {before} → {after}")
    for drift in skill_drift(a, b):
        if drift.warn:
            warnings.append(
                f"{drift.name} changed between runs (git source, {_short(drift.a_ref)} → "
                f"{_short(drift.b_ref)}); pin `ref:` to hold it fixed"
            )
    return warnings


def _short(ref: str | None) -> str:
    return (ref or "?")[:7]


def same_run(a: RunResults, b: RunResults) -> bool:
    """True when both sides are the same saved run."""
    return a.meta.spec_name == b.meta.spec_name and a.meta.run_id == b.meta.run_id


def compare_runs(
    a: RunResults, b: RunResults, *, a_path: str | None = None, b_path: str | None = None
) -> RunComparison:
    """Compare run ``a`` (before) with run ``b`` (after). Callers refuse ``same_run`` pairs."""
    a_score, b_score = score_run(a), score_run(b)
    a_tasks = {t.name: t for t in a_score.tasks}
    b_tasks = {t.name: t for t in b_score.tasks}
    a_outs = {t.name: [r.outcome.value for r in t.attempts] for t in a.tasks}
    b_outs = {t.name: [r.outcome.value for r in t.attempts] for t in b.tasks}
    rows = [
        _compare_task(a_tasks[name], b_tasks[name], a_outs[name], b_outs[name])
        for name in a_tasks
        if name in b_tasks
    ]
    measured = [r for r in rows if r.a_score is not None and r.b_score is not None]
    a_overall = mean(r.a_score for r in measured)
    b_overall = mean(r.b_score for r in measured)
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
        matched_measured=len(measured),
        a_overall=a_overall,
        b_overall=b_overall,
        delta=_delta(a_overall, b_overall),
        has_regression=any(r.regression for r in rows),
        has_activation_regression=any(r.activation_regression for r in rows),
        usage=_usage_delta(a_score.usage, b_score.usage),
        a_usage=a_score.usage,
        b_usage=b_score.usage,
        warnings=meta_warnings(a.meta, b.meta),
        skill_drift=skill_drift(a.meta, b.meta),
    )


def comparison_data(comparison: RunComparison) -> dict:
    """``comparison`` as plain data for ``caliper compare --format json``."""
    data = attrs.asdict(comparison)
    for key in ("a_usage", "b_usage"):
        usage: UsageTotals = getattr(comparison, key)
        data[key]["total_tokens"] = usage.total_tokens
    return data
