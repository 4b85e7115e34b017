"""``caliper run SPEC --resume [RUN]`` of a baseline: both arms of the pair are resumed.

The run ``--resume`` names (default: SPEC's latest) is one arm; its partner is the saved run
with the same ``meta.baseline.id`` and engine. Both are locked before they are read (as any
resume is), each continues under its own run id with only its missing attempts, and the pair
keeps its id, seed and what the control arm leaves out. An arm that was never saved (the run
was killed before its first attempt ended) starts afresh within the same pair.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from caliper.commands.run_setup import lock_continued_run, results_root
from caliper.errors import UsageError
from caliper.results.baseline_store import baseline_of, pair_of, saved_arms
from caliper.results.store import ResultsError, latest_run, load_run_data, resolve_run_ref
from caliper.runner.baseline import CONTROL, FULL, ArmKey
from caliper.runner.run.plan import Continuation
from caliper.spec.model import spec_name_for
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.commands.run_start import RunFlags
    from caliper.runner.run.options import RunOptions


@attrs_classes.frozen
class ResumedPair:
    """What resuming a pair needs: the full arm's options and each saved arm's continuation."""

    options: RunOptions
    continuations: dict[ArmKey, Continuation]
    baseline_id: str
    seed: int
    left_out: tuple[str, ...]


def _named_run(spec: Path, ref: str) -> Path | None:
    """The results file (or journal) ``--resume [RUN]`` names; ``None`` when there is none."""
    if ref:
        return resolve_run_ref(ref, cwd=Path.cwd())
    try:
        entry = latest_run(results_root(spec), spec_name_for(spec))
    except ResultsError:
        return None
    return entry.path if entry is not None else None


def resumed_run_is_an_arm(spec: Path, ref: str) -> bool:
    """Whether the run ``--resume`` names is an arm of a baseline pair."""
    path = _named_run(spec, ref)
    return path is not None and baseline_of(path) is not None


def resume_pair(flags: RunFlags, options: RunOptions) -> ResumedPair:
    """Lock and read both arms of the pair ``flags.resume`` names; the options of its full
    arm (k, engine, judge, ablation and timeouts from the saved run unless given again)."""
    root = options.results_root
    assert root is not None
    spec_name = spec_name_for(flags.spec)
    path = _named_run(flags.spec, flags.resume or "")
    baseline = baseline_of(path) if path is not None else None
    if path is None or baseline is None:
        raise UsageError(
            f"--resume: {flags.resume or flags.spec} is not an arm of a baseline pair.",
            hint="Resume it without --baseline, or start a new baseline run.",
        )
    engine = str(baseline.get("engine") or "")
    arms = pair_of(saved_arms(root, spec_name, str(baseline["id"])), engine)
    continuations: dict[ArmKey, Continuation] = {}
    saved: dict[str, dict[str, Any]] = {}
    for arm in (CONTROL, FULL):
        if arm not in arms:
            continue
        locked = lock_continued_run(arms[arm].entry.path, root, spec_name)
        data = load_run_data(locked)
        saved[arm] = data["meta"]
        continuations[ArmKey(engine, arm)] = Continuation(
            kind="resume", path=locked, data=data, force=flags.force
        )
    meta = saved.get(FULL) or saved[CONTROL]
    left_out = tuple(baseline.get("left_out") or ())
    full_ablated = [
        *(meta.get("ablated") or []),
        *(f"mcp:{name}" for name in meta.get("ablated_mcp") or []),
    ]
    if FULL not in saved:  # the control arm also left out what the baseline leaves out
        gone = {_bare(name) for name in left_out}
        full_ablated = [n for n in full_ablated if _bare(n) not in gone]
    resumed = attrs.evolve(
        options,
        k=flags.k if isinstance(flags.k, int) else int(meta.get("k") or options.k),
        model=_given(flags.model) or meta.get("requested_model", meta.get("backend")),
        judge_model=flags.judge_model or meta.get("judge_requested"),
        ablate=flags.ablate or tuple(full_ablated),
        timeouts=flags.timeouts or meta.get("timeouts") or "failure",
    )
    return ResumedPair(
        options=resumed,
        continuations=continuations,
        baseline_id=str(baseline["id"]),
        seed=int(baseline.get("seed") or 0),
        left_out=left_out,
    )


def _bare(name: str) -> str:
    for prefix in ("skill:", "mcp:"):
        if name.startswith(prefix):
            return name[len(prefix) :]
    return name


def _given(model: tuple[str, ...] | str | None) -> str | None:
    """The one ``--model`` given again, if any."""
    if isinstance(model, tuple):
        return model[0] if model else None
    return model
