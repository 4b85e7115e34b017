"""``caliper retry RUN`` of an arm of a baseline pair: both arms are retried, as a new pair.

Each arm's unusable attempts (``--only``) run again and its other attempts are carried, as a
retry of one run does (each arm's new run names its parent); the two new runs form a new
pair with the same control arm (what it leaves out, the seeded order), and the retry ends
with the pair's comparison, as ``caliper run --baseline`` does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import click

from caliper.commands.retry_checks import has_work, refuse_running_parent
from caliper.commands.run_baseline import BaselineRequest, run_and_finish_baseline
from caliper.errors import UsageError
from caliper.results.baseline_store import pair_of, saved_arms
from caliper.results.store import load_run_data
from caliper.runner.baseline import ArmKey
from caliper.runner.run.options import RunOptions
from caliper.runner.run.plan import Continuation, saved_ablate


def retry_pair(
    path: Path,
    data: dict[str, Any],
    options: RunOptions,
    outcomes: tuple[str, ...],
    force: bool,
    confidence: float,
) -> None:
    """Retry the pair whose arm ``path`` (read as ``data``) is; ``options`` are that arm's."""
    meta = data["meta"]
    baseline = meta["baseline"]
    engine = str(baseline.get("engine") or "")
    assert options.results_root is not None
    arms = pair_of(saved_arms(options.results_root, meta["spec_name"], baseline["id"]), engine)
    if set(arms) != {"control", "full"}:
        raise UsageError(
            f"Cannot retry the baseline pair {baseline['id']}: its "
            f"{'full' if 'full' not in arms else 'control'} arm is not saved here.",
            hint="Retry the arm on its own with `caliper run SPEC --resume` or start a new "
            "baseline run.",
        )
    saved = {}
    for arm, found in arms.items():
        if found.entry.path.resolve() != path.resolve():
            refuse_running_parent(found.entry.path)
        saved[arm] = (found.entry.path, load_run_data(found.entry.path))
    todo = {
        arm: [
            a
            for task in d.get("tasks") or []
            for a in task.get("attempts") or []
            if a.get("outcome") in outcomes
        ]
        for arm, (_, d) in saved.items()
    }
    if not any(todo.values()):
        click.echo(
            f"Neither arm of baseline pair {baseline['id']} has an attempt whose outcome is "
            f"{' or '.join(outcomes)}: nothing to retry.",
            err=True,
        )
        return
    for arm, (_, d) in saved.items():
        if todo[arm]:
            has_work(d, todo[arm], outcomes)  # says what a retry leaves out
    full_meta = saved["full"][1]["meta"]
    full_options = attrs.evolve(options, ablate=saved_ablate(full_meta))
    continuations = {
        ArmKey(engine, arm): Continuation(kind="retry", path=p, data=d, only=outcomes, force=force)
        for arm, (p, d) in saved.items()
    }
    run_and_finish_baseline(
        full_options,
        None,
        BaselineRequest(names=tuple(baseline.get("left_out") or ()), confidence=confidence),
        continuations=continuations,
        seed=int(baseline.get("seed") or 0),
    )
