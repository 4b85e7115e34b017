"""The cost/time spread: Student-t quantiles against a printed table, the mean interval and
quartiles against values worked by hand."""

from __future__ import annotations

import math

import pytest

from caliper.results.spread import mean_interval, spread_of, t_cdf, t_quantile

# Two-sided 95% (0.975 quantile) and 90% (0.95 quantile) values of Student's t, from the
# standard table (e.g. NIST/SEMATECH e-Handbook, section 1.3.6.7.2), to three decimals.
TABLE_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 9: 2.262, 10: 2.228, 29: 2.045}
TABLE_95 = {1: 6.314, 4: 2.132, 7: 1.895, 20: 1.725}


@pytest.mark.parametrize(("df", "value"), sorted(TABLE_975.items()))
def test_t_quantile_975_matches_the_table(df: int, value: float) -> None:
    assert t_quantile(0.975, df) == pytest.approx(value, abs=5e-4)


@pytest.mark.parametrize(("df", "value"), sorted(TABLE_95.items()))
def test_t_quantile_95_matches_the_table(df: int, value: float) -> None:
    assert t_quantile(0.95, df) == pytest.approx(value, abs=5e-4)


def test_t_cdf_closed_forms() -> None:
    # df=1 is the Cauchy distribution: F(t) = 1/2 + atan(t)/π; df=2: 1/2 + t / (2√(2+t²)).
    for t in (-3.0, -0.5, 0.0, 1.0, 4.0):
        assert t_cdf(t, 1) == pytest.approx(0.5 + math.atan(t) / math.pi)
        assert t_cdf(t, 2) == pytest.approx(0.5 + t / (2 * math.sqrt(2 + t * t)))


def test_mean_interval_worked_by_hand() -> None:
    # values 1..5: mean 3, s = √2.5, t(0.975, 4) = 2.776 → 3 ± 2.776·1.5811/√5 = 3 ± 1.963
    found = mean_interval([1.0, 2.0, 3.0, 4.0, 5.0], 0.95)
    assert found is not None
    assert found.low == pytest.approx(1.037, abs=1e-3)
    assert found.high == pytest.approx(4.963, abs=1e-3)
    assert mean_interval([2.0], 0.95) is None


def test_spread_quartiles_interpolate_between_order_statistics() -> None:
    # 1,2,3,4 (inclusive method): q1 = 1.75, median 2.5, q3 = 3.25
    found = spread_of([4.0, 1.0, 3.0, 2.0])
    assert found is not None
    assert (found.q1, found.median, found.q3, found.iqr) == (1.75, 2.5, 3.25, 1.5)
    assert (found.minimum, found.maximum, found.mean, found.n) == (1.0, 4.0, 2.5, 4)
    assert spread_of([]) is None
    one = spread_of([0.5])
    assert one is not None and one.median == 0.5 and one.mean_interval is None
