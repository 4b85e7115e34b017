"""The spread of a continuous per-attempt measure (cost in USD, agent time in seconds).

Rates are judged on binomial intervals; cost and time are continuous, so they get their own
summary: the median with the interquartile range (quartiles by linear interpolation, the
``inclusive`` method of :func:`statistics.quantiles`), and the mean with a two-sided
Student-t interval, ``mean ± t(1 − α/2, n − 1) · s / √n``. Gate bars on cost and time are
judged on that interval for the mean. Pure functions, standard library only.
"""

from __future__ import annotations

import functools
import math
import statistics
import sys
from collections.abc import Sequence

import attrs

from caliper.results.stats import DEFAULT_CONFIDENCE, check_confidence
from caliper.system import attrs_classes

T_MEAN = "student-t-mean"
"""``Interval.method`` of the mean's Student-t interval."""


@attrs_classes.frozen
class MeanInterval:
    """A two-sided interval for a mean (ends not clipped to ``[0, 1]``)."""

    low: float
    high: float
    level: float
    method: str = T_MEAN


@attrs_classes.frozen
class Spread:
    """``n`` values: their median and quartiles, and their mean with its interval.

    ``mean_interval`` is ``None`` with fewer than two values (no spread to estimate from).
    """

    n: int
    mean: float
    median: float
    q1: float
    q3: float
    minimum: float
    maximum: float
    mean_interval: MeanInterval | None = None

    @property
    def iqr(self) -> float:
        """The interquartile range ``q3 − q1``."""
        return self.q3 - self.q1

    def data(self) -> dict[str, object]:
        """Plain JSON data."""
        data = attrs.asdict(self)
        data["iqr"] = self.iqr
        return data


def t_cdf(t: float, df: int) -> float:
    """``P(T ≤ t)`` for Student's t with ``df`` (a positive integer) degrees of freedom.

    The finite series for integer ``df`` (Abramowitz & Stegun 26.7.3 and 26.7.4).
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    theta = math.atan2(t, math.sqrt(df))
    c2 = math.cos(theta) ** 2
    s = math.sin(theta)
    if df % 2 == 1:
        total, term = 0.0, math.cos(theta)
        if df > 1:
            total = term
            for j in range(1, (df - 3) // 2 + 1):
                term *= c2 * (2 * j) / (2 * j + 1)
                total += term
        a = (2.0 / math.pi) * (theta + s * total) if df > 1 else (2.0 / math.pi) * theta
    else:
        total, term = 1.0, 1.0
        for j in range(1, (df - 2) // 2 + 1):
            term *= c2 * (2 * j - 1) / (2 * j)
            total += term
        a = s * total
    return 0.5 + a / 2.0


def t_density(t: float, df: int) -> float:
    """The density of Student's t with ``df`` degrees of freedom at ``t``."""
    log_scale = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    return math.exp(log_scale - (df + 1) / 2 * math.log1p(t * t / df))


@functools.lru_cache(maxsize=4096)
def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (each ``(p, df)`` is
    worked out once per process, as a report asks the same few many times).

    Newton's method on :func:`t_cdf` from the normal quantile's Cornish-Fisher expansion,
    kept inside the bracket the values seen so far give (a step that would leave it halves
    the bracket instead), until a step is below ``1e-12`` of the value. A few evaluations
    of the CDF, whose series has ``df / 2`` terms: bisection's ~40 cost ~0.1 s at
    ``df`` = 50,000."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"a quantile needs 0 < p < 1, not {p}")
    if df < 1:
        raise ValueError(f"degrees of freedom must be at least 1, not {df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    z = statistics.NormalDist().inv_cdf(p)
    guess = z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df * df)
    low, high, t = 0.0, math.inf, max(guess, 1e-3)
    for _ in range(200):
        excess = t_cdf(t, df) - p
        if excess == 0.0:
            return t
        if excess < 0.0:
            low = t
        else:
            high = t
        density = t_density(t, df)
        moved = t - excess / density if density > 0.0 else math.nan
        if not low < moved < high:  # also NaN: bisect, or double while no upper end is known
            moved = (low + high) / 2.0 if high < math.inf else 2.0 * t
        if abs(moved - t) <= 1e-12 * max(1.0, moved):
            return moved
        t = moved
    return t


# statistics.stdev rounds once from the exact variance from Python 3.11 on (twice before).
_ONE_ROUNDING = sys.version_info >= (3, 11)
_SQRT_BITS = 2 * sys.float_info.mant_dig + 3


def stdev(values: Sequence[float]) -> float:
    """The sample standard deviation of ``values`` (at least two), the same float as
    :func:`statistics.stdev` gives: the square root, correctly rounded, of the exact sample
    variance. Finite floats are summed as integers over their common power-of-two
    denominator (``statistics`` sums fractions, many times slower); other values, or a
    Python before 3.11, go to :func:`statistics.stdev` itself."""
    if not (_ONE_ROUNDING and all(type(v) is float and math.isfinite(v) for v in values)):
        return statistics.stdev(values)
    n = len(values)
    if n < 2:
        return statistics.stdev(values)
    ratios = [v.as_integer_ratio() for v in values]
    shift = max(d for _, d in ratios).bit_length() - 1  # every denominator is a power of 2
    scaled = [num << (shift - d.bit_length() + 1) for num, d in ratios]
    total = sum(scaled)
    numerator = n * sum(x * x for x in scaled) - total * total
    denominator = n * (n - 1) << 2 * shift
    common = math.gcd(numerator, denominator)
    return _sqrt_of_fraction(numerator // common, denominator // common)


def _sqrt_of_fraction(n: int, m: int) -> float:
    """``√(n/m)`` correctly rounded to a float: an integer square root with enough bits,
    rounded to odd, then one rounding to the float (how :mod:`statistics` does it)."""
    q = (n.bit_length() - m.bit_length() - _SQRT_BITS) // 2
    if q >= 0:
        return float(_isqrt_to_odd(n, m << 2 * q) << q)
    return _isqrt_to_odd(n << -2 * q, m) / (1 << -q)


def _isqrt_to_odd(n: int, m: int) -> int:
    """``√(n/m)`` as an integer, rounded to odd (the last bit set when not exact)."""
    root = math.isqrt(n // m)
    return root | (root * root * m != n)


def mean_interval(
    values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE
) -> MeanInterval | None:
    """The Student-t interval for the mean of ``values`` (``None`` below two values)."""
    check_confidence(confidence)
    n = len(values)
    if n < 2:
        return None
    centre = math.fsum(values) / n
    half = t_quantile(0.5 + confidence / 2.0, n - 1) * stdev(values) / math.sqrt(n)
    return MeanInterval(centre - half, centre + half, confidence)


def spread_of(values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE) -> Spread | None:
    """The :class:`Spread` of ``values`` (``None`` when there are none)."""
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        q1 = median = q3 = ordered[0]
    else:
        q1, median, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    return Spread(
        n=len(ordered),
        mean=math.fsum(ordered) / len(ordered),
        median=median,
        q1=q1,
        q3=q3,
        minimum=ordered[0],
        maximum=ordered[-1],
        mean_interval=mean_interval(ordered, confidence),
    )
