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
