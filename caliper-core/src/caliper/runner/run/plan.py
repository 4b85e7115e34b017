"""Planning a run: which attempts to run, and which finished ones to carry over.

A fresh run plans every task k times. ``caliper run --resume`` plans only the attempts a
saved run lacks and carries the rest over verbatim (same run id). ``caliper retry`` plans
exactly the unusable attempts of a saved run, carries the others, and gives each retried
attempt its earlier tries as history (a new run whose metadata names its parent).

Both refuse, with one message (exit 2), to continue a run whose spec text, neighbourhood
(content hashes), engine or k changed since; ``--force`` goes on and records the differences
in ``meta.forced``. The plan is pure data: the scheduler runs its jobs, the assembler
combines the carried and the new attempts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from caliper.errors import UsageError
from caliper.plugin.executor import AttemptJob
from caliper.results.outcome import Outcome
from caliper.runner.run.meta import spec_hash
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.results.models import TryRecord
    from caliper.runner.run.prepare import PreparedRun
    from caliper.runner.shard import Shard
    from caliper.spec.model import Spec

RETRYABLE = (Outcome.INFRA_ERROR.value, Outcome.TIMEOUT.value, Outcome.JUDGE_ERROR.value)


@attrs_classes.frozen
class Continuation:
    """A saved run that this run continues (``resume``) or derives from (``retry``).

    ``data`` is the saved run in its stored form (as on disk); ``only`` limits a retry to
    those outcomes; ``force`` continues despite a changed spec, neighbourhood, engine or k.
    """

    kind: str
    path: Path
    data: dict[str, Any]
    only: tuple[str, ...] = RETRYABLE
    force: bool = False

    @property
    def meta(self) -> dict[str, Any]:
        """The saved run's metadata."""
        return self.data["meta"]

    @property
    def ref(self) -> str:
        """``SPEC/RUN-ID`` of the saved run."""
        return f"{self.meta.get('spec_name')}/{self.meta.get('run_id')}"


@attrs_classes.define
class RunPlan:
    """What a run will do: the attempts to run, the finished ones it keeps, its identity."""

    jobs: list[tuple[str, int]]
    """``(task name, attempt number)`` to run, task by task."""
    carried: list[dict[str, Any]] = attrs.field(factory=list)
    """Finished attempts kept as they are (stored form)."""
    history: dict[tuple[str, int], list[TryRecord]] = attrs.field(factory=dict)
    """Earlier tries to put in front of a re-run attempt's own ``tries``."""
    run_id: str | None = None
    """Fixed run id (a resume keeps its own); ``None``: a new one is claimed."""
    started_at: str | None = None
    notes: dict[str, Any] = attrs.field(factory=dict)
    """Metadata fields this plan sets (``parent_run``, ``derived_by``, ``changes``…)."""


def every_attempt(spec: Spec, k: int) -> list[tuple[str, int]]:
    """Every task k times, task by task."""
    return [(task.name, n) for task in spec.tasks for n in range(1, k + 1)]


def differences(prepared: PreparedRun, meta: dict[str, Any], *, check_k: bool) -> list[str]:
    """How the run about to start differs from the saved run ``meta`` describes."""
    found = []
    if meta.get("spec_hash") and meta["spec_hash"] != spec_hash(prepared):
        found.append("the spec file changed since that run (its SHA-256 differs)")
    saved = {s.get("name"): s.get("content_hash") for s in meta.get("skill_snapshots") or []}
    now = {s.name: s.content_hash for s in prepared.skills}
    if saved.keys() != now.keys():
        found.append(
            f"the declared skills changed ({', '.join(sorted(map(str, saved))) or 'none'} → "
            f"{', '.join(sorted(now)) or 'none'})"
        )
    else:
        changed = sorted(n for n in now if saved[n] and now[n] and saved[n] != now[n])
        if changed:
            found.append(f"the content of skill {', '.join(changed)} changed (content hash)")
    saved_out = _left_out(meta.get("ablated") or [], meta.get("ablated_mcp") or [])
    now_out = _left_out(prepared.ablation.skills, prepared.ablation.mcp)
    if saved_out != now_out:
        found.append(
            f"--ablate differs ({', '.join(saved_out) or 'none'} → {', '.join(now_out) or 'none'})"
        )
    backend = prepared.engine.backend_id
    if meta.get("backend") and meta["backend"] != backend:
        found.append(f"the engine differs ({meta['backend']} → {backend})")
    elif "requested_model" in meta and meta["requested_model"] != prepared.options.model:
        found.append(
            f"--model differs ({meta['requested_model'] or 'default'} → "
            f"{prepared.options.model or 'default'})"
        )
    if check_k and meta.get("k") != prepared.options.k:
        found.append(f"k differs ({meta.get('k')} → {prepared.options.k})")
    return found


def saved_ablate(meta: Mapping[str, Any]) -> tuple[str, ...]:
    """The ``--ablate`` names that give a saved run's ablation again (its skills, and its
    ``mcp:`` servers as ``mcp:NAME``)."""
    return (
        *(meta.get("ablated") or ()),
        *(f"mcp:{name}" for name in meta.get("ablated_mcp") or ()),
    )


def _left_out(skills: Iterable[str], servers: Iterable[str]) -> list[str]:
    """What a run left out, as one sorted list (servers as ``mcp:NAME``)."""
    return sorted([*skills, *(f"mcp:{name}" for name in servers)])


def _refuse_or_force(what: str, ref: str, found: list[str], force: bool) -> list[str]:
    if found and not force:
        raise UsageError(
            f"Cannot {what} run {ref}: " + "; ".join(found) + ".",
            hint="Its attempts would not be comparable with new ones. Start a new run, or "
            "pass --force to continue anyway (recorded in the run's metadata).",
        )
    return found


def _attempts(data: dict[str, Any], spec: Spec) -> list[dict[str, Any]]:
    names = {task.name for task in spec.tasks}
    return [
        attempt
        for task in data.get("tasks") or []
        if task.get("name") in names
        for attempt in task.get("attempts") or []
    ]


def resume_plan(prepared: PreparedRun, source: Continuation, now: str) -> RunPlan:
    """Only the attempts the saved run lacks, under its own run id."""
    meta = source.meta
    forced = _refuse_or_force(
        "resume", source.ref, differences(prepared, meta, check_k=True), source.force
    )
    spec, k = prepared.spec, prepared.options.k
    carried = [a for a in _attempts(source.data, spec) if 1 <= int(a.get("attempt") or 0) <= k]
    have = {(a.get("task_name"), a.get("attempt")) for a in carried}
    jobs = [job for job in every_attempt(spec, k) if job not in have]
    return RunPlan(
        jobs=jobs,
        carried=carried,
        run_id=meta.get("run_id"),
        started_at=meta.get("started_at"),
        notes={
            "resumed_at": [*(meta.get("resumed_at") or []), now],
            "forced": [*(meta.get("forced") or []), *forced],
            "parent_run": meta.get("parent_run"),
            "derived_by": meta.get("derived_by"),
            "changes": list(meta.get("changes") or []),
        },
    )


def _history(attempt: dict[str, Any], run_id: str | None) -> list[TryRecord]:
    from caliper.results import codec
    from caliper.results.models import TryRecord

    record = codec.attempt_from_data(attempt)
    last = TryRecord(
        outcome=record.outcome,
        reason=record.reason,
        duration_seconds=record.duration_seconds,
        usage=record.usage,
        model=record.model,
        retry_after=record.retry_after,
        run_id=run_id,
    )
    return [*record.tries, last]


def retry_plan(prepared: PreparedRun, source: Continuation) -> RunPlan:
    """Exactly the saved run's attempts whose outcome is in ``source.only``, in a new run."""
    meta = source.meta
    forced = _refuse_or_force(
        "retry", source.ref, differences(prepared, meta, check_k=False), source.force
    )
    carried, jobs, history = [], [], {}
    for attempt in _attempts(source.data, prepared.spec):
        key = (str(attempt.get("task_name")), int(attempt.get("attempt") or 0))
        if attempt.get("outcome") in source.only:
            jobs.append(key)
            history[key] = _history(attempt, meta.get("run_id"))
        else:
            carried.append(attempt)
    order = {task.name: task.index for task in prepared.spec.tasks}
    jobs.sort(key=lambda job: (order.get(job[0], 0), job[1]))
    return RunPlan(
        jobs=jobs,
        carried=carried,
        history=history,
        notes={
            "parent_run": source.ref,
            "derived_by": "retry",
            "changes": [
                f"retried {len(jobs)} attempt(s) whose outcome was "
                f"{' or '.join(source.only)}: " + _names(jobs)
            ],
            "forced": forced,
        },
    )


def shard_plan(plan: RunPlan, spec: Spec, k: int, shard: Shard) -> RunPlan:
    """``plan`` cut to the attempts ``shard`` owns in the whole plan (every task k times).

    Works on a fresh plan and on a resume's (only the shard's missing attempts stay). The
    plan's notes mark the run as a shard: ``meta.shard`` and a partial run whose stop reason
    says which slice it is (see :mod:`caliper.runner.shard`).
    """
    from caliper.runner.shard import shard_jobs, shard_meta, shard_sentence

    whole = every_attempt(spec, k)
    mine = set(shard_jobs(whole, shard))
    return attrs.evolve(
        plan,
        jobs=[job for job in plan.jobs if job in mine],
        notes={
            **plan.notes,
            "shard": shard_meta(shard, whole),
            "partial": True,
            "stop_reason": shard_sentence(shard, whole),
        },
    )


def _names(jobs: Iterable[tuple[str, int]]) -> str:
    text = ", ".join(f"{task} #{n}" for task, n in jobs)
    return text or "none"


def plan_run(prepared: PreparedRun, continuation: Continuation | None, now: str) -> RunPlan:
    """The plan of one engine's run: every attempt (none up front under ``--k auto``, whose
    jobs are handed out as attempts finish), or what a resume or retry needs."""
    if continuation is None:
        if prepared.options.adaptive is not None:
            return RunPlan(jobs=[])
        plan = RunPlan(jobs=every_attempt(prepared.spec, prepared.options.k))
    elif continuation.kind == "resume":
        plan = resume_plan(prepared, continuation, now)
    else:
        plan = retry_plan(prepared, continuation)
    if prepared.options.shard is not None:  # --shard I/N: this shard's slice only
        plan = shard_plan(plan, prepared.spec, prepared.options.k, prepared.options.shard)
    return plan


def attempt_jobs(
    plans: Mapping[str, RunPlan],
    runs: Mapping[str, PreparedRun],
    order: Callable[[Mapping[str, list[AttemptJob]]], list[AttemptJob]] | None = None,
) -> list[AttemptJob]:
    """The scheduler's jobs for every engine key's plan, task by task within a key, put in
    one queue by ``order`` (default :func:`interleave`: one job of each key in turn)."""
    return (order or interleave)(
        {
            key: [
                AttemptJob(task, number, key, runs[key].engine.backend_id)
                for task, number in plan.jobs
            ]
            for key, plan in plans.items()
        }
    )


def interleave(jobs_by_engine: Mapping[str, list[AttemptJob]]) -> list[AttemptJob]:
    """One job of each engine in turn, so the pool works on every engine from the start."""
    lists = list(jobs_by_engine.values())
    longest = max((len(jobs) for jobs in lists), default=0)
    return [jobs[i] for i in range(longest) for jobs in lists if i < len(jobs)]
