"""Shards: one deterministic slice of a run's attempts, for CI matrices (``--shard I/N``).

The whole plan is every task k times, task by task (:func:`caliper.runner.run.plan.every_attempt`).
Shard ``I`` of ``N`` takes the attempts at positions ``I-1, I-1+N, I-1+2N, …`` of that list
(round-robin), so every shard gets about the same number of attempts of every kind, the N
shards never overlap and together they are exactly the whole plan (for any N, also more than
there are attempts: the extra shards are empty). The slice depends only on the task names, k
and N, so the same command on another machine picks the same attempts.

A shard run records what it is (:func:`shard_meta`): its index and count, and a fingerprint
of the whole plan, so ``caliper merge`` (:mod:`caliper.results.merge`) can check the shards
belong together and rebuild the whole run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from caliper.errors import UsageError
from caliper.results.shard_plan import owner, plan_fingerprint
from caliper.system import attrs_classes

__all__ = [
    "SHARD_RE",
    "Shard",
    "owner",
    "parse_shard",
    "plan_fingerprint",
    "shard_for_run",
    "shard_jobs",
    "shard_meta",
    "shard_sentence",
]

SHARD_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


@attrs_classes.frozen
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def owns(self, position: int) -> bool:
        """Whether the plan's attempt at ``position`` (0-based, plan order) is this shard's."""
        return position % self.count == self.index - 1


def parse_shard(text: str, flag: str = "--shard") -> Shard:
    """``I/N`` as a :class:`Shard`; anything else is a usage error (exit 2)."""
    match = SHARD_RE.match(text or "")
    if not match:
        raise UsageError(
            f"{flag} {text!r} is not of the form I/N.",
            hint="Write the shard's number and the number of shards, e.g. --shard 2/4.",
        )
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 1 <= index <= count:
        raise UsageError(
            f"{flag} {text!r}: in I/N the shard number I must be between 1 and the number "
            "of shards N (1 ≤ I ≤ N).",
            hint="For 4 shards run --shard 1/4, --shard 2/4, --shard 3/4 and --shard 4/4.",
        )
    return Shard(index, count)


def shard_jobs(plan: Sequence[tuple[str, int]], shard: Shard) -> list[tuple[str, int]]:
    """The attempts of the whole ``plan`` (in plan order) that belong to ``shard``."""
    return [job for position, job in enumerate(plan) if shard.owns(position)]


def shard_meta(shard: Shard, plan: Sequence[tuple[str, int]]) -> dict[str, Any]:
    """What a shard run's ``meta.shard`` records: its place in the whole plan."""
    return {
        "index": shard.index,
        "count": shard.count,
        "plan_fingerprint": plan_fingerprint(plan),
        "plan_attempts": len(plan),
        "attempts": len(shard_jobs(plan, shard)),
    }


def shard_sentence(shard: Shard, plan: Sequence[tuple[str, int]]) -> str:
    """The stop reason a shard run reports: which slice it is and how to get the whole."""
    mine = len(shard_jobs(plan, shard))
    return (
        f"shard {shard} of the run: {mine} of its {len(plan)} attempts (merge all "
        f"{shard.count} shards with `caliper merge` for the whole run)"
    )


def shard_for_run(
    text: str | None, *, adaptive: bool, resumed: dict[str, Any] | None
) -> Shard | None:
    """The shard ``caliper run`` runs: ``--shard`` as given, or (with ``--resume``) the
    resumed run's own. Refused (exit 2): with ``--k auto`` (adaptive k decides a task's
    attempts from all of its results, which one shard does not see), and a ``--resume`` whose
    ``--shard`` is not the resumed run's."""
    shard = parse_shard(text) if text is not None else None
    if shard is not None and adaptive:
        raise UsageError(
            "--shard cannot be combined with --k auto: adaptive k decides how many attempts "
            "a task gets from all of its results, which one shard does not see.",
            hint="Give a fixed --k to shard the run, or run --k auto unsharded.",
        )
    if resumed is None:
        return shard
    saved = resumed.get("shard")
    own = Shard(int(saved["index"]), int(saved["count"])) if isinstance(saved, dict) else None
    if shard is not None and shard != own:
        ref = f"{resumed.get('spec_name')}/{resumed.get('run_id')}"
        raise UsageError(
            f"--resume {ref} --shard {shard}: that run is "
            + (f"shard {own}." if own else "not a shard run."),
            hint="Leave out --shard: a resume continues the run's own slice.",
        )
    return own
