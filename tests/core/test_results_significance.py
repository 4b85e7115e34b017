"""compare's tests against published examples and brute force, never against their own formula.

* Fisher's exact test: R's ``fisher.test`` documentation examples (``?fisher.test``): the
  lady tasting tea (3 of 4 cups right each way: one-sided p = 0.2429, two-sided 0.4857) and
  the Convictions table of twins (alternative "less": p = 0.0004652).
* Holm: the worked example of Holm's step-down method on Wikipedia ("Holm–Bonferroni
  method", four hypotheses with p = 0.01, 0.04, 0.03, 0.005 at alpha 0.05: H1 and H4 are
  rejected) and the adjusted values it implies by hand.
* The stratified test: the exact p-value found by enumerating every relabelling of the
  attempts within each task (itertools), which is the definition of the test.
"""

from __future__ import annotations

import itertools
import math
import random
import time

import pytest

from caliper.results.significance import (
    fisher_exact,
    holm_adjust,
    hypergeometric_pmf,
    stratified_exact_test,
)


def test_fisher_lady_tasting_tea():
    # R: TeaTasting <- matrix(c(3, 1, 1, 3), nrow = 2); fisher.test(TeaTasting, "greater")
    # before = 1 of 4 milk-first cups called right, after = 3 of 4
    assert fisher_exact(1, 4, 3, 4, "greater") == pytest.approx(0.2429, abs=1e-4)
    assert fisher_exact(3, 4, 1, 4, "less") == pytest.approx(0.2429, abs=1e-4)
    assert fisher_exact(3, 4, 1, 4) == pytest.approx(0.4857, abs=1e-4)


def test_fisher_convictions_of_twins():
    # R: Convictions <- matrix(c(2, 10, 15, 3), nrow = 2); fisher.test(Convictions,
    # alternative = "less") -> p-value = 0.0004652 (dizygotic 2/17 vs monozygotic 10/13)
    assert fisher_exact(10, 13, 2, 17, "less") == pytest.approx(0.0004652, abs=1e-7)


def test_fisher_with_no_trials_is_no_evidence():
    assert fisher_exact(0, 0, 3, 3) == 1.0


def test_fisher_at_k_3_can_never_reject_at_5_percent():
    # the most extreme table, 3/3 vs 0/3, has two-sided p = 2 / C(6, 3) = 0.1
    assert fisher_exact(3, 3, 0, 3) == pytest.approx(0.1)


def test_holm_wikipedia_example():
    adjusted = holm_adjust([0.01, 0.04, 0.03, 0.005])
    # by hand: sorted 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, max(0.04*1, 0.06) = 0.06
    assert adjusted == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert [p <= 0.05 for p in adjusted] == [True, False, False, True]  # H1 and H4 rejected


def test_holm_keeps_order_and_caps_at_one():
    assert holm_adjust([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm_adjust([]) == []
    assert holm_adjust([0.02]) == [0.02]


def test_hypergeometric_sums_to_one():
    pmf = hypergeometric_pmf(20, 8, 11)
    assert math.fsum(pmf.values()) == pytest.approx(1.0)


def brute_force_stratified(pairs, alternative):
    """Enumerate every way to relabel each task's attempts as before/after (keeping each side's
    size), with equal weight: the permutation distribution of the mean change."""
    per_task = []
    for xa, na, xb, nb in pairs:
        outcomes = [1] * (xa + xb) + [0] * (na + nb - xa - xb)
        stats = []
        for chosen in itertools.combinations(range(na + nb), nb):
            after = sum(outcomes[i] for i in chosen)
            before = xa + xb - after
            stats.append(after / nb - before / na)
        per_task.append(stats)
    observed = sum(xb / nb - xa / na for xa, na, xb, nb in pairs)
    hits = total = 0
    for combo in itertools.product(*per_task):
        value = sum(combo)
        total += 1
        if alternative == "less":
            hits += value <= observed + 1e-12
        elif alternative == "greater":
            hits += value >= observed - 1e-12
        else:
            hits += abs(value) >= abs(observed) - 1e-12
    return hits / total


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
@pytest.mark.parametrize(
    "pairs",
    [
        [(3, 3, 1, 3), (2, 3, 0, 3)],
        [(4, 4, 1, 3), (2, 5, 2, 2), (1, 2, 2, 3)],  # unequal k across sides and tasks
        [(2, 3, 3, 3), (3, 3, 3, 3), (1, 3, 0, 3)],
    ],
)
def test_stratified_test_matches_brute_force(pairs, alternative):
    expected = brute_force_stratified(pairs, alternative)
    assert stratified_exact_test(pairs, alternative) == pytest.approx(expected, abs=1e-9)


def test_stratified_test_is_deterministic_and_skips_empty_sides():
    pairs = [(8, 10, 4, 10)] * 5
    assert stratified_exact_test(pairs) == stratified_exact_test(pairs)
    assert stratified_exact_test([(1, 0, 1, 2)]) == 1.0
    assert stratified_exact_test([*pairs, (0, 0, 3, 3)]) == stratified_exact_test(pairs)


def test_bad_alternative_is_refused():
    with pytest.raises(ValueError):
        fisher_exact(1, 2, 1, 2, "sideways")


def test_the_seeded_monte_carlo_fallback_agrees_with_the_exact_value(monkeypatch):
    from caliper.results import significance

    pairs = [(4, 4, 1, 3), (2, 5, 2, 2), (1, 2, 2, 3)]
    exact = stratified_exact_test(pairs)
    monkeypatch.setattr(significance, "MAX_EXACT_SUPPORT", 1)
    estimate = stratified_exact_test(pairs)
    assert estimate != exact  # the fallback really ran
    assert estimate == pytest.approx(exact, abs=0.01)
    assert stratified_exact_test(pairs) == estimate  # seeded: the same every time


def _unequal_pairs(seed: int, tasks: int, counts) -> list[tuple[int, int, int, int]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(tasks):
        na, nb = rng.choice(counts), rng.choice(counts)
        pairs.append((rng.randint(0, na), na, rng.randint(0, nb), nb))
    return pairs


@pytest.mark.parametrize("counts", [(19, 20), (17, 18, 19, 20), (15, 16, 17, 18, 19, 20)])
def test_the_whole_run_test_takes_under_a_second_at_60_tasks_with_unequal_counts(counts):
    pairs = _unequal_pairs(3, 60, counts)
    started = time.process_time()
    p = stratified_exact_test(pairs)
    assert time.process_time() - started < 1.0
    assert 0.0 < p <= 1.0


def test_the_seeded_estimate_agrees_with_the_exact_convolution(monkeypatch):
    """Where the exact distribution is affordable but the estimate is forced, the two agree
    within four standard errors of 20,000 draws."""
    from caliper.results import significance

    for seed in range(4):
        pairs = _unequal_pairs(seed, 8, (7, 9, 10))
        monkeypatch.setattr(significance, "MAX_EXACT_TOTAL_WORK", 10**9)
        exact = stratified_exact_test(pairs)
        monkeypatch.setattr(significance, "MAX_EXACT_TOTAL_WORK", 0)
        estimate = stratified_exact_test(pairs)
        error = 4 * math.sqrt(max(exact * (1 - exact), 1e-4) / 20_000) + 1 / 20_001
        assert abs(estimate - exact) <= error, (seed, exact, estimate)
