"""Finding the saved runs of a baseline pair (``meta.baseline``) in the results store."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from caliper.results.store import ResultsError, RunEntry, list_runs, load_run_data
from caliper.system import attrs_classes


@attrs_classes.frozen
class SavedArm:
    """One saved arm of a baseline: where it is, and its ``meta.baseline``."""

    entry: RunEntry
    baseline: dict[str, Any]

    @property
    def engine(self) -> str:
        """``--model`` as given to the baseline (``""``: the default engine)."""
        return str(self.baseline.get("engine") or "")

    @property
    def arm(self) -> str:
        """``full`` or ``control``."""
        return str(self.baseline.get("arm") or "")

    shard: bool = False
    """Whether the run is one shard of the arm (``--shard I/N``)."""


def baseline_of(path: Path) -> dict[str, Any] | None:
    """``meta.baseline`` of the saved run (or journal) at ``path``; ``None`` when it is not
    an arm of a baseline or cannot be read."""
    meta = _meta(path)
    found = meta.get("baseline")
    return found if isinstance(found, dict) and found.get("id") else None


def _meta(path: Path) -> dict[str, Any]:
    try:
        return load_run_data(path).get("meta") or {}
    except ResultsError:
        return {}


def saved_arms(root: Path, spec_name: str | None, baseline_id: str) -> list[SavedArm]:
    """Every saved arm of baseline ``baseline_id`` (of one spec, or of any), oldest first."""
    needle = json.dumps(baseline_id).encode("utf-8")
    found = []
    for entry in list_runs(root, spec_name):
        try:
            if needle not in entry.path.read_bytes():  # cheap: most runs are not in it
                continue
        except OSError:
            continue
        meta = _meta(entry.path)
        baseline = meta.get("baseline")
        if isinstance(baseline, dict) and baseline.get("id") == baseline_id:
            found.append(SavedArm(entry, baseline, shard=bool(meta.get("shard"))))
    return found


def pair_of(arms: list[SavedArm], engine: str) -> dict[str, SavedArm]:
    """The arms of one engine's pair, by arm (``control``, ``full``)."""
    return {arm.arm: arm for arm in arms if arm.engine == engine}


def latest_pair(arms: list[SavedArm], engine: str) -> dict[str, SavedArm]:
    """One engine's pair to judge: per arm the latest saved run that is not a shard (a merged
    run stands for its shards); an arm saved only as shards is left out (merge it first)."""
    chosen: dict[str, SavedArm] = {}
    for arm in arms:  # oldest first: the latest wins
        if arm.engine == engine and not arm.shard:
            chosen[arm.arm] = arm
    return chosen
