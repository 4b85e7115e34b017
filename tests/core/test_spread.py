"""The cost/time spread: Student-t quantiles against a printed table, the mean interval and
quartiles against values worked by hand."""

from __future__ import annotations

import math

import pytest

from caliper.results.spread import mean_interval, spread_of, stdev, t_cdf, t_quantile

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


@pytest.mark.parametrize("p", [0.9, 0.975, 0.995, 0.9999999])
def test_t_quantile_closed_forms_for_one_and_two_degrees(p: float) -> None:
    # df=1 (Cauchy): tan(π(p − 1/2)); df=2: (2p − 1) / √(2p(1 − p))
    assert t_quantile(p, 1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-9)
    assert t_quantile(p, 2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-9)
    assert t_quantile(1 - p, 2) == -t_quantile(p, 2)


@pytest.mark.parametrize("df", [1_000, 9_999, 49_999, 200_000])
@pytest.mark.parametrize("p", [0.95, 0.975, 0.995])
def test_t_quantile_for_many_degrees_matches_the_cornish_fisher_series(p: float, df: int) -> None:
    # Abramowitz & Stegun 26.7.5 to the 1/df^4 term: the rest is below 1e-14 here.
    z = {0.95: 1.6448536269514722, 0.975: 1.959963984540054, 0.995: 2.5758293035489004}[p]
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    series = z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4
    assert t_quantile(p, df) == pytest.approx(series, rel=1e-10)


def test_t_quantile_refuses_what_has_no_quantile() -> None:
    for p, df in ((0.0, 5), (1.0, 5), (0.5, 0)):
        with pytest.raises(ValueError):
            t_quantile(p, df)
    assert t_quantile(0.5, 7) == 0.0


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


def test_stdev_worked_by_hand() -> None:
    # 2, 4, 4, 4, 5, 5, 7, 9: mean 5, squared deviations sum to 32, s = √(32/7)
    assert stdev([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]) == math.sqrt(32 / 7)
    # the example of Python's statistics.stdev documentation
    assert stdev([1.5, 2.5, 2.5, 2.75, 3.25, 4.75]) == 1.0810874155219827
    assert stdev([0.25, 0.25, 0.25]) == 0.0


def test_stdev_is_the_float_statistics_gives() -> None:
    # statistics.stdev works with exact fractions: the same float, bit for bit, on values of
    # every magnitude (subnormal to near the largest float), of either sign, and on repeats.
    import random
    import statistics

    rng = random.Random(34)
    makers = [
        rng.random,
        lambda: rng.uniform(-1e6, 1e6),
        lambda: rng.expovariate(1.0) * 10.0 ** rng.randint(-300, 300),
        lambda: rng.choice([0.1, 0.2, 0.3, 5e-324, 1e-320, 4e307]),
        lambda: rng.gauss(0.0012, 1e-5),
    ]
    for _ in range(3000):
        make = rng.choice(makers)
        values = [make() for _ in range(rng.randint(2, 30))]
        assert stdev(values).hex() == statistics.stdev(values).hex(), values


def test_stdev_of_values_it_does_not_sum_itself() -> None:
    import statistics

    assert stdev([1, 2, 4]) == statistics.stdev([1, 2, 4])  # ints
    with pytest.raises(statistics.StatisticsError):
        stdev([1.0])
