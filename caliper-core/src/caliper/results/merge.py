"""Merging shard runs (``caliper run --shard I/N``) back into the whole run (``caliper merge``).

:func:`check_shards` makes sure the shard runs belong together — the same spec (name and
SHA-256), neighbourhood (skills' content hashes, ``--ablate``, the user's setup), engine, k,
shard count and plan, every shard once, each holding exactly its own attempts and none missing
— and raises one :class:`MergeError` (exit 2) naming the two files and the field at the first
mismatch. :func:`merge_data` then builds the data of one run from them, in the stored form (no
text is capped twice), that scores and reports exactly as the unsharded run would. Both are
pure: reading the files and saving the result are :mod:`caliper.commands.merge`'s job.
"""

from __future__ import annotations

import collections
import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from caliper.errors import UsageError
from caliper.results.journal import assemble, attempt_key
from caliper.results.shard_plan import owner, plan_fingerprint
from caliper.system import attrs_classes

HINT = (
    "Shards merge only when they were run with the same command apart from --shard: the same "
    "spec and skills, --model, --ablate and --k. Re-run the odd shard, or leave it out."
)


class MergeError(UsageError):
    """The shard runs cannot be merged (exit 2); the message names the files and the field."""


@attrs_classes.frozen
class ShardRun:
    """One shard run to merge: where it was read from and its stored-form data."""

    path: Path
    data: dict[str, Any]

    @property
    def meta(self) -> dict[str, Any]:
        """The shard run's metadata."""
        return self.data["meta"]

    @property
    def shard(self) -> dict[str, Any]:
        """Its ``meta.shard`` block (checked to be there by :func:`check_shards`)."""
        return self.meta["shard"]

    @property
    def label(self) -> str:
        """``PATH (shard I/N)`` for messages."""
        shard = self.meta.get("shard")
        if isinstance(shard, dict):
            return f"{self.path} (shard {shard.get('index')}/{shard.get('count')})"
        return str(self.path)

    def attempts(self) -> list[dict[str, Any]]:
        """Every attempt the shard run holds (stored form)."""
        return [a for task in self.data.get("tasks") or [] for a in task.get("attempts") or []]

    def aborted(self) -> set[str]:
        """The tasks ``--fail-fast`` stopped in this shard."""
        return {str(t.get("name")) for t in self.data.get("tasks") or [] if t.get("aborted")}


def _neighbourhood(meta: dict[str, Any]) -> dict[str, Any]:
    return {str(s.get("name")): s.get("content_hash") for s in meta.get("skill_snapshots") or []}


def _engine(meta: dict[str, Any]) -> str:
    requested = meta.get("requested_model")
    return f"{meta.get('backend')}" + (f" (--model {requested})" if requested else "")


# field name in messages -> how to read it from a run's meta
IDENTITY: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
    ("spec name", lambda m: m.get("spec_name")),
    ("spec hash (SHA-256 of the spec file)", lambda m: m.get("spec_hash")),
    ("skills (name → content hash)", _neighbourhood),
    ("--ablate (skills)", lambda m: sorted(m.get("ablated") or [])),
    ("--ablate (mcp servers)", lambda m: sorted(m.get("ablated_mcp") or [])),
    ("user customizations", lambda m: bool(m.get("user_customizations"))),
    ("engine", _engine),
    ("k", lambda m: m.get("k")),
    ("shard count", lambda m: (m.get("shard") or {}).get("count")),
    ("plan fingerprint", lambda m: (m.get("shard") or {}).get("plan_fingerprint")),
]


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "…"


def _whole_plan(run: ShardRun) -> list[tuple[str, int]]:
    """The whole plan the shard was cut from: every task of the run k times, in order."""
    k = int(run.meta.get("k") or 0)
    names = [str(t.get("name")) for t in run.data.get("tasks") or []]
    return [(name, n) for name in names for n in range(1, k + 1)]


def _resume_hint(run: ShardRun) -> str:
    meta = run.meta
    return (
        f"Finish it with `caliper run {meta.get('spec_path')} --resume "
        f"{meta.get('spec_name')}/{meta.get('run_id')}`, then merge again."
    )


def check_shards(runs: Sequence[ShardRun]) -> None:
    """Raise :class:`MergeError` at the first reason ``runs`` are not one whole run's shards."""
    if not runs:
        raise MergeError("caliper merge needs the shard runs to merge.")
    _check_finished_shards(runs)
    first = runs[0]
    _check_same_run(first, runs[1:])
    by_index = _by_shard_index(runs)
    count = int(first.shard.get("count") or 0)
    _check_none_missing(by_index, count)
    whole = _whole_plan(first)
    if plan_fingerprint(whole) != first.shard.get("plan_fingerprint"):
        raise MergeError(
            f"{first.label}: its tasks and k do not give the plan its fingerprint records "
            "(the file was changed by hand?).",
            hint=HINT,
        )
    owners = owner(whole, count)
    seen = _attempt_holders(runs)
    _check_own_slices(seen, owners, count)
    _check_complete(runs, owners, seen)


def _check_finished_shards(runs: Sequence[ShardRun]) -> None:
    """Refuse a run that is not a shard run, or one that did not finish."""
    for run in runs:
        if not isinstance(run.meta.get("shard"), dict):
            raise MergeError(
                f"{run.path} is not a shard run (it was not run with --shard I/N).",
                hint="Merge only the files `caliper run SPEC --shard I/N` saved.",
            )
        if run.meta.get("incomplete"):
            raise MergeError(
                f"{run.label} is incomplete: its run was killed (or is still running).",
                hint=_resume_hint(run),
            )


def _check_same_run(first: ShardRun, others: Sequence[ShardRun]) -> None:
    """Refuse shards that differ from ``first`` in any of the :data:`IDENTITY` fields."""
    for run in others:
        for field, read in IDENTITY:
            mine, theirs = read(first.meta), read(run.meta)
            if mine != theirs:
                raise MergeError(
                    f"Cannot merge {first.path} and {run.path}: they differ in {field} "
                    f"({_short(mine)} vs {_short(theirs)}).",
                    hint=HINT,
                )


def _by_shard_index(runs: Sequence[ShardRun]) -> dict[int, ShardRun]:
    """The runs by their shard number; refuses a shard given twice."""
    by_index: dict[int, ShardRun] = {}
    for run in runs:
        index = int(run.shard.get("index") or 0)
        if index in by_index:
            raise MergeError(
                f"Cannot merge {by_index[index].path} and {run.path}: both are shard "
                f"{index}/{run.shard.get('count')} (their attempts would overlap).",
                hint="Give each shard once.",
            )
        by_index[index] = run
    return by_index


def _check_none_missing(by_index: dict[int, ShardRun], count: int) -> None:
    """Refuse a set of shards that lacks any of the ``count`` shards."""
    missing = [i for i in range(1, count + 1) if i not in by_index]
    if missing:
        have = ", ".join(f"{i}/{count}" for i in sorted(by_index))
        lacking = ", ".join(f"{i}/{count}" for i in missing)
        raise MergeError(
            f"Cannot merge: shard{'s' if len(missing) > 1 else ''} {lacking} "
            f"{'are' if len(missing) > 1 else 'is'} missing (given: {have}).",
            hint=f"Pass all {count} shard runs, e.g. the results folders of every CI job.",
        )


def _attempt_holders(runs: Sequence[ShardRun]) -> dict[tuple[str, int], ShardRun]:
    """The run holding each ``(task, attempt)``; refuses an attempt two runs hold."""
    seen: dict[tuple[str, int], ShardRun] = {}
    for run in runs:
        for attempt in run.attempts():
            key = attempt_key(attempt)
            if key in seen:
                raise MergeError(
                    f"Cannot merge {seen[key].path} and {run.path}: both hold attempt "
                    f"{key[1]} of task {key[0]!r} (attempts overlap).",
                    hint=HINT,
                )
            seen[key] = run
    return seen


def _check_own_slices(
    seen: dict[tuple[str, int], ShardRun], owners: dict[tuple[str, int], int], count: int
) -> None:
    """Refuse a run holding an attempt that the whole plan gives to another shard."""
    for key, run in seen.items():
        index = int(run.shard["index"])
        if owners.get(key) != index:
            raise MergeError(
                f"Cannot merge {run.label}: it holds attempt {key[1]} of task {key[0]!r}, "
                f"which is not part of shard {index}/{count}'s slice.",
                hint=HINT,
            )


def _check_complete(
    runs: Sequence[ShardRun],
    owners: dict[tuple[str, int], int],
    seen: dict[tuple[str, int], ShardRun],
) -> None:
    """Refuse a run that lacks attempts of its slice (other than of tasks it aborted)."""
    for run in runs:
        index = int(run.shard["index"])
        aborted = run.aborted()
        lacking = [
            job
            for job, shard in owners.items()
            if shard == index and job not in seen and job[0] not in aborted
        ]
        if lacking:
            names = ", ".join(f"{task!r} #{n}" for task, n in lacking[:5])
            more = f" and {len(lacking) - 5} more" if len(lacking) > 5 else ""
            raise MergeError(
                f"Cannot merge {run.label}: it lacks {len(lacking)} of its attempts "
                f"({names}{more}); it stopped early"
                + (f" ({_short(run.meta.get('stop_reason'))})." if _stopped(run) else "."),
                hint=_resume_hint(run),
            )


# settings that do not stop a merge but are worth a word when the shards differ in them
NOTED: list[tuple[str, str]] = [
    ("--timeout", "timeout"),
    ("--timeouts", "timeouts"),
    ("--retries", "retries"),
    ("--judge-model", "judge_requested"),
    ("the agent CLI's version", "cli_version"),
    ("caliper's version", "caliper_version"),
]


def merge_notes(runs: Sequence[ShardRun]) -> list[str]:
    """Settings the shards differ in that do not prevent a merge (the merged run keeps shard
    1's), one sentence each, for the user to judge."""
    ordered = sorted(runs, key=lambda r: int(r.shard["index"]))
    notes = []
    for label, key in NOTED:
        values = {str(r.meta.get(key)) for r in ordered}
        if len(values) > 1:
            shown = ", ".join(
                f"{r.shard['index']}/{r.shard['count']}: {r.meta.get(key)}" for r in ordered
            )
            notes.append(f"the shards differ in {label} ({shown})")
    return notes


def _stopped(run: ShardRun) -> bool:
    reason = run.meta.get("stop_reason") or ""
    return bool(reason) and not reason.startswith("shard ")


def _most_common(values: Sequence[Any]) -> Any:
    counts = collections.Counter(v for v in values if v)
    return counts.most_common(1)[0][0] if counts else None


def merge_data(runs: Sequence[ShardRun], run_id: str) -> dict[str, Any]:
    """The data of the whole run from checked shards (see :func:`check_shards`), as run
    ``run_id``: the first shard's metadata with the times, model and judge over all shards,
    every shard's attempts under their tasks, and ``merged_from`` naming the shards."""
    ordered = sorted(runs, key=lambda r: int(r.shard["index"]))
    metas = [r.meta for r in ordered]
    meta = copy.deepcopy(metas[0])
    meta["run_id"] = run_id
    meta["started_at"] = min(str(m.get("started_at") or "") for m in metas) or meta["started_at"]
    finished = [str(m["finished_at"]) for m in metas if m.get("finished_at")]
    meta["finished_at"] = max(finished) if finished else None
    meta["model"] = _most_common([m.get("model") for m in metas])
    for key in ("judge_backend", "judge_model", "judge_prompt_version", "cli_version"):
        meta[key] = _most_common([m.get(key) for m in metas])
    setup: dict[str, list[str]] = {}
    for m in metas:
        for kind, names in (m.get("user_setup") or {}).items():
            kept = setup.setdefault(kind, [])
            kept += [n for n in names if n not in kept]
    meta["user_setup"] = setup
    meta["forced"] = [f for m in metas for f in m.get("forced") or []]
    meta["resumed_at"] = sorted({t for m in metas for t in m.get("resumed_at") or []})
    meta["shard"] = None
    meta["derived_by"] = "merge"
    meta["parent_run"] = None  # the parents are the shards, named in merged_from
    meta["changes"] = []
    meta["partial"] = False
    meta["stop_reason"] = None
    meta["incomplete"] = False
    meta["merged_from"] = [
        {
            "shard": f"{m['shard']['index']}/{m['shard']['count']}",
            "run": f"{m.get('spec_name')}/{m.get('run_id')}",
        }
        for m in metas
    ]
    tasks = ordered[0].data.get("tasks") or []
    attempts = [a for run in ordered for a in run.attempts()]
    aborted = set().union(*(run.aborted() for run in ordered))
    return assemble(meta, tasks, attempts, aborted)
