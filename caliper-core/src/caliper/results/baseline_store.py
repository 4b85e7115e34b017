"""Finding the saved runs of a baseline pair (``meta.baseline``) in the results store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from caliper.results.store import RunEntry, list_runs, load_run_data


@attrs.frozen
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


def baseline_of(path: Path) -> dict[str, Any] | None:
    """``meta.baseline`` of the saved run (or journal) at ``path``; ``None`` when it is not
    an arm of a baseline or cannot be read."""
    from caliper.results.store import ResultsError

    try:
        meta = load_run_data(path).get("meta") or {}
    except ResultsError:
        return None
    found = meta.get("baseline")
    return found if isinstance(found, dict) and found.get("id") else None


def saved_arms(root: Path, spec_name: str | None, baseline_id: str) -> list[SavedArm]:
    """Every saved arm of baseline ``baseline_id`` (of one spec, or of any), oldest first."""
    found = []
    for entry in list_runs(root, spec_name):
        baseline = baseline_of(entry.path)
        if baseline is not None and baseline.get("id") == baseline_id:
            found.append(SavedArm(entry, baseline))
    return found


def pair_of(arms: list[SavedArm], engine: str) -> dict[str, SavedArm]:
    """The arms of one engine's pair, by arm (``control``, ``full``)."""
    return {arm.arm: arm for arm in arms if arm.engine == engine}
