"""Interval functions against reference values computed outside this code.

Reference values: Wilson score intervals from Newcombe (1998), "Two-sided confidence intervals
for the single proportion", Statistics in Medicine 17:857-872, Table I (method 3), and the
issue's worked example 2/3 -> [20.8, 93.9] (also R's ``prop.test(2, 3, correct=FALSE)``).
"""

from __future__ import annotations

import pytest

from caliper.results.stats import check_confidence, wilson_interval, z_value


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
