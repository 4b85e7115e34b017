"""The plan helpers of sharded runs live in ``caliper.results`` and the runner re-exports them."""

from __future__ import annotations

import subprocess
import sys

from caliper.results import shard_plan
from caliper.runner import shard


def test_runner_shard_reexports_the_plan_helpers() -> None:
    """``caliper.runner.shard`` still offers ``owner`` and ``plan_fingerprint``, the same ones."""
    assert shard.owner is shard_plan.owner
    assert shard.plan_fingerprint is shard_plan.plan_fingerprint


def test_owner_and_fingerprint_of_a_small_plan() -> None:
    """Round-robin owners, and a fingerprint that depends on the plan's order."""
    plan = [("a", 1), ("a", 2), ("b", 1)]
    assert shard_plan.owner(plan, 2) == {("a", 1): 1, ("a", 2): 2, ("b", 1): 1}
    assert shard_plan.plan_fingerprint(plan) != shard_plan.plan_fingerprint(plan[::-1])
    assert len(shard_plan.plan_fingerprint(plan)) == 64


def test_merge_does_not_import_the_runner() -> None:
    """Reading and merging results needs none of the runner's modules."""
    code = (
        "import sys, caliper.results.merge\n"
        "print(sorted(m for m in sys.modules if m.startswith('caliper.runner')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
