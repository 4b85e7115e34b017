"""Interval functions against reference values computed outside this code.

Reference values: Wilson score intervals from Newcombe (1998), "Two-sided confidence intervals
for the single proportion", Statistics in Medicine 17:857-872, Table I (method 3), and the
issue's worked example 2/3 -> [20.8, 93.9] (also R's ``prop.test(2, 3, correct=FALSE)``).
"""

from __future__ import annotations

import random

import pytest

from caliper.results.stats import (
    check_confidence,
    mean_rate_interval,
    newcombe_difference_interval,
    paired_mean_difference_interval,
    wilson_interval,
    z_value,
)


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [
        (81, 263, 0.2553, 0.3662),  # Newcombe 1998, Table I
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        (2, 3, 0.2077, 0.9385),
    ],
)
def test_wilson_matches_published_values(successes, trials, low, high):
    interval = wilson_interval(successes, trials, 0.95)
    assert interval is not None
    assert interval.low == pytest.approx(low, abs=1e-4)
    assert interval.high == pytest.approx(high, abs=1e-4)
    assert interval.method == "wilson"


def test_z_value_is_the_normal_quantile():
    assert z_value(0.95) == pytest.approx(1.959964, abs=1e-6)
    assert z_value(0.90) == pytest.approx(1.644854, abs=1e-6)


def test_no_trials_has_no_interval():
    assert wilson_interval(0, 0) is None


@pytest.mark.parametrize("bad", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_bad_confidence_is_refused(bad):
    with pytest.raises(ValueError):
        check_confidence(bad)


def test_counts_out_of_range_are_refused():
    with pytest.raises(ValueError):
        wilson_interval(4, 3)


# Newcombe (1998), "Interval estimation for the difference between independent proportions:
# comparison of eleven methods", Statistics in Medicine 17:873-890, Table II, method 10
# (hybrid score). Each row: (x1, n1, x2, n2, low, high) for p1 - p2.
NEWCOMBE_TABLE_II = [
    (56, 70, 48, 80, 0.0524, 0.3339),
    (9, 10, 3, 10, 0.1705, 0.8090),
    (5, 56, 0, 29, -0.0381, 0.1926),
    (0, 10, 0, 20, -0.1611, 0.2775),
    (0, 10, 0, 10, -0.2775, 0.2775),
    (10, 10, 0, 20, 0.6791, 1.0000),
    (10, 10, 0, 10, 0.6075, 1.0000),
]


@pytest.mark.parametrize(("x1", "n1", "x2", "n2", "low", "high"), NEWCOMBE_TABLE_II)
def test_newcombe_hybrid_matches_table_ii(x1, n1, x2, n2, low, high):
    # caliper's difference is after − before, so "after" is Newcombe's first sample
    interval = newcombe_difference_interval(x2, n2, x1, n1, 0.95)
    assert interval is not None
    assert interval.low == pytest.approx(low, abs=1e-4)
    assert interval.high == pytest.approx(high, abs=1e-4)
    assert interval.method == "newcombe"


def test_one_task_mean_is_its_wilson_interval():
    # 2/3 -> [20.8, 93.9] (Newcombe 1998 single-proportion Table I method; R prop.test)
    interval = mean_rate_interval([(2, 3), (0, 0)])
    assert interval is not None
    assert (interval.low, interval.high) == pytest.approx((0.2077, 0.9385), abs=1e-4)


def test_one_task_difference_is_newcombe():
    interval = paired_mean_difference_interval([(48, 80, 56, 70)])
    assert interval is not None
    assert (interval.low, interval.high) == pytest.approx((0.0524, 0.3339), abs=1e-4)


def test_empty_inputs_have_no_interval():
    assert mean_rate_interval([]) is None
    assert mean_rate_interval([(0, 0)]) is None
    assert paired_mean_difference_interval([(1, 0, 1, 3)]) is None


def _coverage(method, truths, k, reps, seed):
    rng = random.Random(seed)
    covered = 0
    for _ in range(reps):
        interval = method(rng, k)
        covered += interval.contains(truths)
    return covered / reps


@pytest.mark.parametrize("k", [3, 5, 10])
@pytest.mark.parametrize(
    "probabilities",
    [(0.6, 0.7, 0.75, 0.8, 0.9), (0.95,) * 5, (0.3, 0.5, 0.6, 0.9, 0.99), (0.8, 0.9)],
)
def test_run_score_interval_covers_the_true_mean(probabilities, k):
    """Checked by simulation, not by the formula: attempts drawn with known pass chances; the
    interval of the mean of task rates must hold the true mean in >= ~95% of runs."""
    truth = sum(probabilities) / len(probabilities)

    def draw(rng, k):
        counts = [(sum(rng.random() < p for _ in range(k)), k) for p in probabilities]
        return mean_rate_interval(counts, 0.95)

    assert _coverage(draw, truth, k, reps=1500, seed=12) >= 0.935


@pytest.mark.parametrize("k", [3, 10])
def test_paired_difference_interval_covers_the_true_change(k):
    before = (0.6, 0.7, 0.75, 0.8, 0.9)
    after = (0.3, 0.7, 0.9, 0.5, 0.9)
    truth = (sum(after) - sum(before)) / len(before)

    def draw(rng, k):
        pairs = []
        for pa, pb in zip(before, after, strict=True):
            pairs.append(
                (
                    sum(rng.random() < pa for _ in range(k)),
                    k,
                    sum(rng.random() < pb for _ in range(k)),
                    k,
                )
            )
        return paired_mean_difference_interval(pairs, 0.95)

    assert _coverage(draw, truth, k, reps=1500, seed=13) >= 0.935


def test_a_wider_level_gives_a_wider_interval():
    counts = [(2, 3), (3, 3), (1, 3)]
    narrow, wide = mean_rate_interval(counts, 0.8), mean_rate_interval(counts, 0.99)
    assert wide.low < narrow.low and wide.high > narrow.high
    assert wide.level == 0.99
