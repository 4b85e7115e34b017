"""The permutation tests compare uses on cost and time, against a hand-worked case and an
independent enumeration of every ordering (n! permutations, not the combinations the code
walks)."""

from __future__ import annotations

import itertools
import math

import pytest

from caliper.results import permutation
from caliper.results.permutation import permutation_p, stratified_permutation_p


def _by_orderings(a: list[float], b: list[float]) -> float:
    """The two-sided p over all (n_a + n_b)! orderings of the pooled values."""
    pooled = [*a, *b]
    observed = abs(sum(b) / len(b) - sum(a) / len(a))
    hits = total = 0
    for order in itertools.permutations(pooled):
        new_b, new_a = order[: len(b)], order[len(b) :]
        total += 1
        hits += abs(sum(new_b) / len(b) - sum(new_a) / len(a)) >= observed - 1e-12
    return hits / total


def test_hand_worked_two_by_two() -> None:
    # a = 1, 2; b = 3, 4: of the 6 splits, {3,4} and {1,2} reach |Δ| = 2 → p = 1/3
    assert permutation_p([1.0, 2.0], [3.0, 4.0]) == pytest.approx(1 / 3)
    assert permutation_p([], [1.0]) is None


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([0.1, 0.3, 0.2], [0.5, 0.4, 0.6, 0.45]),
        ([10.0, 12.0, 9.5, 11.0], [10.5, 13.0, 12.5]),
        ([1.0, 1.0, 2.0], [1.0, 2.0, 2.0]),  # ties
    ],
)
def test_matches_enumerating_every_ordering(a: list[float], b: list[float]) -> None:
    assert permutation_p(a, b) == pytest.approx(_by_orderings(a, b))


def test_stratified_matches_the_product_of_orderings() -> None:
    strata = [([1.0, 2.0], [2.5, 3.0]), ([5.0, 7.0, 6.0], [8.0, 7.5])]
    observed = abs(sum(sum(b) / len(b) - sum(a) / len(a) for a, b in strata))
    values = []
    for first in itertools.permutations([*strata[0][0], *strata[0][1]]):
        for second in itertools.permutations([*strata[1][0], *strata[1][1]]):
            d1 = sum(first[:2]) / 2 - sum(first[2:]) / 2
            d2 = sum(second[:2]) / 2 - sum(second[2:]) / 3
            values.append(abs(d1 + d2))
    expected = sum(v >= observed - 1e-12 for v in values) / len(values)
    assert stratified_permutation_p(strata) == pytest.approx(expected)


def test_beyond_the_exact_limit_the_estimate_is_near_the_exact_p(monkeypatch) -> None:
    a, b = [0.1, 0.3, 0.2, 0.25, 0.15], [0.5, 0.4, 0.6, 0.45, 0.2]
    exact = permutation_p(a, b)
    assert math.comb(10, 5) == 252
    monkeypatch.setattr(permutation, "EXACT_LIMIT", 10)
    estimate = permutation_p(a, b)
    assert exact is not None and estimate is not None
    # 2,000 draws: the standard error of the estimate is at most 0.0112
    assert estimate == pytest.approx(exact, abs=0.04)
    assert estimate >= 1 / (permutation.DRAWS + 1)


def _split_differences(a: list[float], b: list[float]) -> list[float]:
    pooled = [*a, *b]
    out = []
    for chosen in itertools.combinations(range(len(pooled)), len(b)):
        new_b = [pooled[i] for i in chosen]
        new_a = [pooled[i] for i in range(len(pooled)) if i not in chosen]
        out.append(sum(new_b) / len(new_b) - sum(new_a) / len(new_a))
    return out


@pytest.mark.parametrize(
    ("a", "b"),
    [([1.0, 2.0], [3.0]), ([0.5, 4.0, 2.5, 2.5], [1.0, 7.0, 3.0]), ([2.0, 2.0], [2.0, 2.0, 2.0])],
)
def test_the_split_variance_is_the_variance_over_every_split(a, b) -> None:
    differences = _split_differences(a, b)
    mean = sum(differences) / len(differences)
    variance = sum((d - mean) ** 2 for d in differences) / len(differences)
    assert mean == pytest.approx(0.0, abs=1e-12)
    assert permutation.split_variance(a, b) == pytest.approx(variance, abs=1e-12)


def _skewed_strata(rng, count: int, shift: float = 0.0) -> list[tuple[list[float], list[float]]]:
    """Tasks of 4 + 4 agent times, log-normal (skewed), ``shift`` added to the after side."""
    strata = []
    for _ in range(count):
        scale = rng.uniform(1.0, 30.0)
        a = [scale * rng.lognormvariate(0.0, 0.6) for _ in range(4)]
        b = [scale * rng.lognormvariate(0.0, 0.6) + shift for _ in range(4)]
        strata.append((a, b))
    return strata


def test_many_tasks_take_the_normal_approximation_near_a_long_monte_carlo() -> None:
    # 150 tasks (over MC_WORK / DRAWS): against 3,000 draws of the statistic made here
    import random

    rng = random.Random(3)
    for shift in (0.0, 0.25):
        strata = _skewed_strata(rng, 150, shift)
        observed = abs(sum(sum(b) / 4 - sum(a) / 4 for a, b in strata))
        hits = 0
        draws = 3000
        for _ in range(draws):
            total = 0.0
            for a, b in strata:
                pooled = a + b
                rng.shuffle(pooled)
                total += sum(pooled[:4]) / 4 - sum(pooled[4:]) / 4
            hits += abs(total) >= observed
        reference = hits / draws
        p = stratified_permutation_p(strata)
        se = max(reference * (1 - reference), 0.01) ** 0.5 / draws**0.5
        assert abs(p - reference) < 4 * se + 0.01, (shift, p, reference)


def test_the_normal_approximation_holds_its_level_when_nothing_changed() -> None:
    # 300 runs of 150 tasks with before and after from one law: rejections at 5% near 5%
    import random

    rng = random.Random(11)
    rejected = sum(stratified_permutation_p(_skewed_strata(rng, 150)) <= 0.05 for _ in range(300))
    # binomial(300, 0.05): mean 15, sd 3.8
    assert 4 <= rejected <= 27


def test_a_hundred_tasks_are_still_drawn_and_more_are_approximated(monkeypatch) -> None:
    import random

    rng = random.Random(5)
    used = []
    monkeypatch.setattr(
        permutation, "normal_p", lambda kept, observed: used.append(len(kept)) or 0.5
    )
    stratified_permutation_p(_skewed_strata(rng, 100, 0.2))
    assert used == []
    stratified_permutation_p(_skewed_strata(rng, 101, 0.2))
    assert used == [101]


def test_per_task_tests_share_their_draws_when_many_need_an_estimate() -> None:
    import random

    rng = random.Random(9)
    # 9 + 9 attempts: 48,620 splits each, past EXACT_LIMIT, so each is estimated
    pairs = [([rng.random() for _ in range(9)], [rng.random() + 0.1 for _ in range(9)])
             for _ in range(40)]  # fmt: skip
    few = permutation.each_permutation_p(pairs)
    assert few == [permutation_p(a, b) for a, b in pairs]  # 40 × DRAWS fit: unchanged
    many = pairs * 5  # 200 estimated: FAMILY_WORK / 200 = 500 draws each
    shared = permutation.each_permutation_p([*many, ([1.0, 2.0], [3.0, 4.0])])
    draws = permutation.FAMILY_WORK // 200
    for p, full in zip(shared, few * 5, strict=False):
        hits = p * (draws + 1) - 1
        assert hits == pytest.approx(round(hits), abs=1e-6) and 0 <= round(hits) <= draws
        assert abs(p - full) < 0.12  # 500 draws: standard error at most 0.023
    assert shared[-1] == pytest.approx(1 / 3)  # an exact test is untouched


def _looped_hits(kept, observed, draws):
    """The draws as written before: a fresh pooled list and its fsum for every stratum and
    draw."""
    import random

    rng = random.Random(permutation.SEED)
    hits = 0
    for _ in range(draws):
        total = []
        for a, b in kept:
            pooled = [*a, *b]
            rng.shuffle(pooled)
            chosen = math.fsum(pooled[: len(b)])
            total.append(chosen / len(b) - (math.fsum(pooled) - chosen) / len(a))
        hits += abs(math.fsum(total)) >= observed - 1e-9 * max(1.0, observed)
    return hits


def test_the_drawn_splits_are_the_ones_a_plain_loop_draws() -> None:
    import random

    rng = random.Random(21)
    for count in (1, 3, 12):
        kept = _skewed_strata(rng, count, 0.1)
        observed = abs(math.fsum(sum(b) / 4 - sum(a) / 4 for a, b in kept))
        for bar in (observed, observed / 2, 0.0):
            assert permutation._drawn_hits(kept, bar, 300) == _looped_hits(kept, bar, 300)


def test_one_stratum_is_tested_on_the_splits_a_plain_loop_draws() -> None:
    """The one-stratum path (positions picked by kept getters) against a loop shuffling the
    values, for unequal sides, a single value after, a repeated shape (kept getters reused)
    and a stratum too big to keep getters for."""
    import random

    rng = random.Random(33)
    for size_a, size_b, draws in (
        (7, 13, 40),
        (12, 1, 60),
        (7, 13, 40),
        (9, 9, 19),
        (300, 400, 700),
    ):
        a = [rng.gauss(0, 1) for _ in range(size_a)]
        b = [rng.gauss(0.3, 1) for _ in range(size_b)]
        kept = [(a, b)]
        observed = abs(sum(b) / size_b - sum(a) / size_a)
        for bar in (observed, observed / 3, 0.0):
            assert permutation._drawn_hits(kept, bar, draws) == _looped_hits(kept, bar, draws)
    assert permutation.GETTER_WORK < (300 + 400) * 700  # the last shape took the loop
