"""Power of compare's tests, checked against brute force and seeded simulation of the real
tests (never against the power formulas themselves)."""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import pytest

from caliper.results.power import (
    attempts_needed,
    detectable_drop_table,
    overall_detectable_drop,
    overall_power,
    power_table,
    task_detectable_drop,
    task_power,
)
from caliper.results.significance import fisher_exact, stratified_exact_test

DOC = Path(__file__).parents[2] / "docs" / "statistics.md"


def brute_force_task_power(na, nb, before, after, alpha):
    """Sum the binomial chances of every table on which Fisher's test flags a drop."""
    total = 0.0
    for xa in range(na + 1):
        for xb in range(nb + 1):
            if xb / nb < xa / na and fisher_exact(xa, na, xb, nb) <= alpha:
                total += (
                    math.comb(na, xa)
                    * before**xa
                    * (1 - before) ** (na - xa)
                    * math.comb(nb, xb)
                    * after**xb
                    * (1 - after) ** (nb - xb)
                )
    return total


@pytest.mark.parametrize(
    ("na", "nb", "before", "after", "alpha"),
    [(10, 10, 0.8, 0.4, 0.05), (5, 7, 0.9, 0.2, 0.01), (20, 20, 0.75, 0.5, 0.05 / 6)],
)
def test_task_power_is_the_chance_fisher_flags_a_drop(na, nb, before, after, alpha):
    assert task_power(na, nb, before, after, alpha) == pytest.approx(
        brute_force_task_power(na, nb, before, after, alpha), abs=1e-12
    )


def test_task_power_agrees_with_simulation():
    rng = random.Random(5)
    hits = 0
    draws = 4000
    for _ in range(draws):
        xa = sum(rng.random() < 0.8 for _ in range(10))
        xb = sum(rng.random() < 0.3 for _ in range(10))
        hits += xb < xa and fisher_exact(xa, 10, xb, 10) <= 0.05
    assert task_power(10, 10, 0.8, 0.3, 0.05) == pytest.approx(hits / draws, abs=0.025)


def test_at_k_3_no_single_task_drop_is_detectable():
    assert task_power(3, 3, 0.9, 0.0, 0.05) == 0.0  # Fisher's smallest p at k=3 is 0.1
    assert task_detectable_drop(3, 3, 0.05) is None


@pytest.mark.parametrize(("tasks", "k"), [(5, 3), (3, 10), (10, 5)])
def test_overall_power_agrees_with_simulating_the_stratified_test(tasks, k):
    alpha = 0.05 / (tasks + 1)
    drop = overall_detectable_drop(tasks, k, k, alpha)
    rng = random.Random(tasks * 100 + k)
    hits = 0
    draws = 600
    for _ in range(draws):
        pairs = [
            (
                sum(rng.random() < 0.8 for _ in range(k)),
                k,
                sum(rng.random() < 0.8 - drop for _ in range(k)),
                k,
            )
            for _ in range(tasks)
        ]
        falls = sum(p[2] - p[0] for p in pairs) < 0
        hits += falls and stratified_exact_test(pairs) <= alpha
    predicted = overall_power(tasks, k, k, 0.8, 0.8 - drop, alpha)
    assert predicted == pytest.approx(hits / draws, abs=0.07)


def test_more_attempts_or_tasks_detect_smaller_drops():
    drops = [overall_detectable_drop(5, k, k, 0.05 / 6) for k in (3, 5, 10, 20)]
    assert drops == sorted(drops, reverse=True)
    by_tasks = [overall_detectable_drop(t, 10, 10, 0.05 / (t + 1)) for t in (3, 5, 10, 20)]
    assert by_tasks == sorted(by_tasks, reverse=True)


def test_attempts_needed_is_the_first_k_with_enough_power():
    k = attempts_needed(0.2, 5, 0.05 / 6)
    assert overall_power(5, k, k, 0.8, 0.6, 0.05 / 6) >= 0.8
    assert overall_power(5, k - 1, k - 1, 0.8, 0.6, 0.05 / 6) < 0.8
    one = attempts_needed(0.3, 1, 0.05)
    assert (
        task_power(one, one, 0.8, 0.5, 0.05) >= 0.8 > task_power(one - 1, one - 1, 0.8, 0.5, 0.05)
    )
    assert attempts_needed(0.0, 5, 0.05) is None


def test_the_table_in_the_docs_is_the_generated_one():
    text = DOC.read_text()
    match = re.search(r"^\| k \\ tasks \|.*?(?=\n\n)", text, re.M | re.S)
    assert match, "docs/statistics.md has no detectable-drop table"
    assert match.group(0) == detectable_drop_table(), (
        "regenerate it with: python -m caliper.results.power"
    )


def test_the_power_table_in_the_docs_is_the_generated_one():
    assert power_table() in DOC.read_text(), "regenerate it with: python -m caliper.results.power"
