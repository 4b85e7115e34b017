"""Shards (issue 18): the slices of a plan partition it exactly, and bad ``--shard`` values
are one clear usage error."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from caliper.errors import UsageError
from caliper.runner.run.plan import RunPlan, every_attempt, shard_plan
from caliper.runner.shard import (
    Shard,
    owner,
    parse_shard,
    plan_fingerprint,
    shard_for_run,
    shard_jobs,
)


def _spec(task_names: list[str]) -> SimpleNamespace:
    return SimpleNamespace(
        tasks=[SimpleNamespace(name=name, index=i) for i, name in enumerate(task_names)]
    )


def _specs() -> list[tuple[list[str], int]]:
    """Task lists and k's: tiny, uneven, unicode, and some random ones (seeded)."""
    fixed = [
        (["only"], 1),
        (["only"], 7),
        (["a", "b"], 1),
        (["a", "b", "c"], 3),
        (["x = y", "naïve", "日本", "with space"], 5),
    ]
    rng = random.Random(18)
    drawn = [
        ([f"task-{i}" for i in range(rng.randint(1, 9))], rng.randint(1, 12)) for _ in range(20)
    ]
    return fixed + drawn


@pytest.mark.parametrize(("names", "k"), _specs())
def test_the_shards_partition_the_whole_plan_for_every_n(names: list[str], k: int) -> None:
    spec = _spec(names)
    whole = every_attempt(spec, k)
    for count in range(1, len(whole) + 4):  # includes N > number of attempts
        slices = [
            shard_plan(RunPlan(jobs=list(whole)), spec, k, Shard(i, count)).jobs
            for i in range(1, count + 1)
        ]
        union = [job for part in slices for job in part]
        assert sorted(union) == sorted(whole), (count, "the union is exactly the plan")
        assert len(union) == len(set(union)), (count, "no attempt is in two shards")
        sizes = [len(part) for part in slices]
        assert max(sizes) - min(sizes) <= 1, (count, sizes)
        for part in slices:  # each slice keeps plan order
            assert part == [job for job in whole if job in set(part)]
        assert owner(whole, count) == {
            job: i for i, part in enumerate(slices, start=1) for job in part
        }


def test_a_resumed_shard_only_runs_its_own_missing_attempts() -> None:
    spec = _spec(["a", "b"])
    whole = every_attempt(spec, 3)  # a1 a2 a3 b1 b2 b3
    # positions 0, 2, 4 of the whole plan belong to shard 1/2
    assert shard_jobs(whole, Shard(1, 2)) == [("a", 1), ("a", 3), ("b", 2)]
    missing = [("a", 1), ("a", 2), ("b", 2)]  # what a resume found missing
    plan = shard_plan(RunPlan(jobs=missing, notes={"resumed_at": ["t"]}), spec, 3, Shard(1, 2))
    assert plan.jobs == [("a", 1), ("b", 2)]
    assert plan.notes["resumed_at"] == ["t"]


def test_a_shard_plan_records_its_place_in_the_whole() -> None:
    spec = _spec(["a", "b", "c"])
    whole = every_attempt(spec, 2)
    plan = shard_plan(RunPlan(jobs=list(whole), notes={"forced": []}), spec, 2, Shard(3, 4))
    assert plan.notes["forced"] == []
    assert plan.notes["shard"] == {
        "index": 3,
        "count": 4,
        "plan_fingerprint": plan_fingerprint(whole),
        "plan_attempts": 6,
        "attempts": 1,
    }
    assert plan.notes["partial"] is True
    assert "shard 3/4" in plan.notes["stop_reason"]
    assert "caliper merge" in plan.notes["stop_reason"]


def test_the_fingerprint_depends_on_tasks_order_and_k() -> None:
    one = plan_fingerprint(every_attempt(_spec(["a", "b"]), 2))
    assert one == plan_fingerprint(every_attempt(_spec(["a", "b"]), 2))
    assert one != plan_fingerprint(every_attempt(_spec(["b", "a"]), 2))
    assert one != plan_fingerprint(every_attempt(_spec(["a", "b"]), 3))
    assert one != plan_fingerprint(every_attempt(_spec(["a", "c"]), 2))


@pytest.mark.parametrize(("text", "shard"), [("1/1", Shard(1, 1)), (" 2 / 5 ", Shard(2, 5))])
def test_parse_shard(text: str, shard: Shard) -> None:
    assert parse_shard(text) == shard


@pytest.mark.parametrize("text", ["", "3", "0/3", "4/3", "1/0", "-1/3", "a/b", "1/3/4", "1.5/3"])
def test_a_bad_shard_is_a_usage_error(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_shard(text)
    assert caught.value.exit_code == 2
    assert "--shard" in caught.value.message and "I/N" in caught.value.render()


def test_shard_with_k_auto_is_refused() -> None:
    with pytest.raises(UsageError, match="--k auto"):
        shard_for_run("1/2", adaptive=True, resumed=None)


def test_a_resume_keeps_the_runs_own_shard_and_refuses_another() -> None:
    saved = {"spec_name": "demo", "run_id": "R", "shard": {"index": 2, "count": 3}}
    assert shard_for_run(None, adaptive=False, resumed=saved) == Shard(2, 3)
    assert shard_for_run("2/3", adaptive=False, resumed=saved) == Shard(2, 3)
    with pytest.raises(UsageError, match="that run is shard 2/3"):
        shard_for_run("1/3", adaptive=False, resumed=saved)
    with pytest.raises(UsageError, match="not a shard run"):
        shard_for_run("1/3", adaptive=False, resumed={"spec_name": "demo", "run_id": "R"})
    assert shard_for_run(None, adaptive=False, resumed={"run_id": "R"}) is None
