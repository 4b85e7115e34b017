"""The whole plan of a sharded run, as data: which shard owns each attempt, and its fingerprint.

A run's whole plan is every task k times, task by task, as ``(task, attempt)`` pairs. Shard
``I`` of ``N`` owns the attempts at positions ``I-1, I-1+N, …`` (round-robin). These helpers
describe a plan without running anything: ``caliper run --shard`` (:mod:`caliper.runner.shard`)
records them and ``caliper merge`` (:mod:`caliper.results.merge`) checks shards against them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence


def owner(plan: Sequence[tuple[str, int]], count: int) -> dict[tuple[str, int], int]:
    """Which shard (1-based) of ``count`` each attempt of the whole ``plan`` belongs to."""
    return {job: position % count + 1 for position, job in enumerate(plan)}


def plan_fingerprint(plan: Sequence[tuple[str, int]]) -> str:
    """SHA-256 of the whole plan: its ``(task, attempt)`` list in order."""
    text = json.dumps([[task, number] for task, number in plan], ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
