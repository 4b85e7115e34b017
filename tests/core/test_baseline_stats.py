"""The numbers behind ``caliper run --baseline``, checked against values computed here
independently: the paired anytime-valid stopping rule keeps its error chance under α by
simulation, the smallest detectable lift matches a brute-force power calculation of Fisher's
exact test, the gate reads the interval, and the paired order and bookkeeping hand out
both arms' attempts together."""

from __future__ import annotations

import functools
import math
import random
from types import SimpleNamespace

import pytest

from caliper.plugin.executor import AttemptJob
from caliper.results import sequential
from caliper.results.baseline import (
    HELPS,
    NO_DIFFERENCE,
    BaselineVerdict,
    gate_failures,
    interval_word,
    lift_sensitivity,
)
from caliper.results.models import AttemptRecord, Outcome
from caliper.results.sequential import difference_bounds
from caliper.results.stats import Interval
from caliper.runner.adaptive import AdaptiveSettings
from caliper.runner.baseline import paired_order
from caliper.runner.paired_adaptive import PairedAdaptive, pair_stop_reason

ALPHA = 0.05


@pytest.fixture(autouse=True)
def _remembered_sequences(monkeypatch: pytest.MonkeyPatch) -> None:
    """The simulations ask for the same few hundred intervals again and again: remember them
    (the rule under test is unchanged; only its arithmetic is not redone)."""
    monkeypatch.setattr(
        sequential, "confidence_sequence", functools.lru_cache(None)(sequential.confidence_sequence)
    )


def _simulate(p_control: float, p_full: float, max_k: int, rng: random.Random) -> str | None:
    """One task under the paired rule: ``helps``/``hurts`` when it decided, else None."""
    settings = AdaptiveSettings(max_k=max_k, confidence=1 - ALPHA)
    sc = sf = 0
    for n in range(1, max_k + 1):
        sc += rng.random() < p_control
        sf += rng.random() < p_full
        reason = pair_stop_reason(settings, 0.0, (sc, n), (sf, n), tasks=1)
        if reason is not None:
            return "helps" if "helps" in reason else "hurts" if "hurts" in reason else None
    return None


@pytest.mark.parametrize("rate", [0.2, 0.5, 0.9])
def test_the_paired_rule_rarely_calls_a_difference_that_is_not_there(rate: float) -> None:
    rng = random.Random(20261202)
    reps = 1500
    wrong = sum(_simulate(rate, rate, 30, rng) is not None for _ in range(reps))
    # the true chance is at most α = 5 %; 5 % of 1500 is 75, and its binomial upper tail
    # beyond 100 has chance < 0.2 %
    assert wrong <= 100, wrong


def test_the_difference_interval_covers_the_true_lift_at_every_look() -> None:
    rng = random.Random(7)
    p_control, p_full = 0.2, 0.7
    truth = p_full - p_control
    misses = 0
    reps = 800
    for _ in range(reps):
        sc = sf = 0
        for n in range(1, 41):
            sc += rng.random() < p_control
            sf += rng.random() < p_full
            bounds = difference_bounds((sc, n), (sf, n), 1 - ALPHA, tasks=1)
            if not bounds.low <= truth <= bounds.high:
                misses += 1
                break
    assert misses <= 0.05 * reps + 3 * math.sqrt(0.05 * 0.95 * reps), misses


def test_a_large_lift_is_decided_well_before_max_k() -> None:
    rng = random.Random(3)
    decided = [_simulate(0.0, 1.0, 30, rng) for _ in range(50)]
    assert decided == ["helps"] * 50  # 0/n vs n/n: decided at the n the bound allows
    settings = AdaptiveSettings(max_k=30, confidence=0.95)
    # by hand: each arm's sequence at 1 − α/2 = 0.975 leaves p ≥ 1/2 once (n + 1)·2^−n < 0.025,
    # i.e. from n = 9 on; with all passes vs all failures the interval then lies above 0
    assert pair_stop_reason(settings, 0.0, (0, 8), (8, 8), tasks=1) is None
    assert pair_stop_reason(settings, 0.0, (0, 9), (9, 9), tasks=1).startswith("decided")


def _hypergeometric(n_a: int, n_b: int, total: int) -> dict[int, float]:
    n = n_a + n_b
    return {
        x: math.comb(n_b, x) * math.comb(n_a, total - x) / math.comb(n, total)
        for x in range(max(0, total - n_a), min(n_b, total) + 1)
    }


def _fisher_two_sided(a: int, n_a: int, b: int, n_b: int) -> float:
    pmf = _hypergeometric(n_a, n_b, a + b)
    seen = pmf[b]
    return min(1.0, sum(q for q in pmf.values() if q <= seen * (1 + 1e-7)))


def _lift_power(n: int, control: float, lift: float, alpha: float) -> float:
    """Brute force: the chance Fisher's two-sided test rejects with the full arm ahead."""
    full = control + lift
    total = 0.0
    for a in range(n + 1):
        pa = math.comb(n, a) * control**a * (1 - control) ** (n - a)
        for b in range(a + 1, n + 1):
            if _fisher_two_sided(a, n, b, n) <= alpha:
                total += pa * math.comb(n, b) * full**b * (1 - full) ** (n - b)
    return total


@pytest.mark.parametrize(("k", "control"), [(10, 0.1), (8, 0.3), (15, 0.5)])
def test_the_smallest_detectable_lift_matches_a_brute_force_power_calculation(
    k: int, control: float
) -> None:
    task = SimpleNamespace(a_usable=k, b_usable=k, a_successes=round(control * k))
    comparison = SimpleNamespace(tasks=[task], alpha=ALPHA, confidence=1 - ALPHA)
    sensitivity = lift_sensitivity(comparison)  # type: ignore[arg-type]
    assert sensitivity is not None
    base = sensitivity.control_rate
    lift = sensitivity.task_lift
    assert lift is not None
    assert _lift_power(k, base, lift, ALPHA) >= 0.8
    assert _lift_power(k, base, round(lift - 0.01, 2), ALPHA) < 0.8


def _verdict(interval: Interval | None, word: str, sequential: bool = False) -> BaselineVerdict:
    comparison = SimpleNamespace(confidence=0.95, delta=0.3, delta_interval=interval)
    return BaselineVerdict(
        engine="",
        left_out=["writer"],
        comparison=comparison,  # type: ignore[arg-type]
        verdict=word,
        task_verdicts={},
        activation_verdict=NO_DIFFERENCE,
        sensitivity=None,
        sequential=SimpleNamespace(overall=interval, tasks={}) if sequential else None,  # type: ignore[arg-type]
    )


def test_the_gate_reads_the_interval_not_the_point_estimate() -> None:
    above = Interval(0.25, 0.6, 0.95, "m")
    straddles = Interval(-0.05, 0.6, 0.95, "m")
    assert gate_failures(_verdict(above, HELPS), require_improvement=True, min_lift=0.2) == []
    failed = gate_failures(_verdict(above, HELPS), require_improvement=False, min_lift=0.3)
    assert len(failed) == 1 and "--min-lift 30 pp" in failed[0]
    failed = gate_failures(
        _verdict(straddles, NO_DIFFERENCE), require_improvement=True, min_lift=None
    )
    assert len(failed) == 1 and "not supported" in failed[0]
    # under --k auto the anytime-valid interval decides, whatever the word says
    seq = _verdict(straddles, HELPS, sequential=True)
    assert gate_failures(seq, require_improvement=True, min_lift=None)
    assert interval_word(straddles) == NO_DIFFERENCE and interval_word(above) == HELPS


def test_paired_order_keeps_each_pair_together_and_is_reproducible_from_its_seed() -> None:
    jobs = {
        key: [AttemptJob(task, n, key, "fake") for task in ("a", "b") for n in (1, 2, 3)]
        for key in ("control", "full")
    }
    first = paired_order(11)(jobs)
    assert sorted(map(repr, first)) == sorted(repr(j) for js in jobs.values() for j in js)
    for one, two in zip(first[0::2], first[1::2], strict=True):
        assert (one.task_name, one.number) == (two.task_name, two.number)
        assert {one.engine_key, two.engine_key} == {"control", "full"}
    assert paired_order(11)(jobs) == first
    leaders = {tuple(j.engine_key for j in paired_order(seed)(jobs)[0::2]) for seed in range(20)}
    assert len(leaders) > 1  # the seed changes which arm of a pair goes first


def test_paired_order_interleaves_engines_pair_by_pair() -> None:
    keys = ("codex control", "codex full", "pi control", "pi full")
    jobs = {key: [AttemptJob("t", n, key, key.split()[0]) for n in (1, 2)] for key in keys}
    order = [job.engine_key.split()[0] for job in paired_order(5)(jobs)]
    assert order == ["codex", "codex", "pi", "pi", "codex", "codex", "pi", "pi"]


def _record(task: str, number: int, passed: bool) -> AttemptRecord:
    return AttemptRecord(
        task_name=task, attempt=number, outcome=Outcome.PASS if passed else Outcome.TASK_FAIL
    )


def test_paired_bookkeeping_hands_out_both_arms_of_a_pair_and_stops_them_together() -> None:
    settings = AdaptiveSettings(max_k=30, confidence=0.95)
    pair = PairedAdaptive(settings, ["t"], ("control", "full"))
    control, full = pair.view("control"), pair.view("full")
    never = lambda _name: False  # noqa: E731
    assert control.next_jobs(4, never) == [("t", 1)]  # one pair at a time once min-k is met
    assert full.next_jobs(0, never) == [("t", 1)]  # owed, even with no worker free
    assert control.next_jobs(4, never) == []  # the pair is still running
    number = 1
    while not pair.reasons():
        control.observe(_record("t", number, passed=False))
        full.observe(_record("t", number, passed=True))
        number += 1
        if pair.reasons():
            break
        assert control.next_jobs(4, never) == [("t", number)]
        assert full.next_jobs(4, never) == [("t", number)]
    assert number - 1 == 9  # the n the bound allows (see above)
    assert control.reasons() == full.reasons()
    assert control.next_jobs(4, never) == [] and full.next_jobs(4, never) == []
