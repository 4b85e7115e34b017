"""The grouped Monte Carlo estimate of the whole-run test against independent references:
exact enumeration on small cases, and the per-stratum sampler on medium cases."""

from __future__ import annotations

import bisect
import itertools
import random
import statistics

from caliper.results import significance
from caliper.results.significance import hypergeometric_pmf


def _strata(pairs):
    scale = significance._lcm([n for _, na, _, nb in pairs for n in (na, nb)])

    def stat(xb, na, nb, total):
        return xb * (scale // nb) - (total - xb) * (scale // na)

    strata = [
        (na, nb, xa + xb, hypergeometric_pmf(na + nb, nb, xa + xb)) for xa, na, xb, nb in pairs
    ]
    observed = sum(stat(xb, na, nb, xa + xb) for xa, na, xb, nb in pairs)
    return strata, stat, observed


def _enumerated_p(pairs):
    """Two-sided p by listing every joint outcome of the strata."""
    strata, stat, observed = _strata(pairs)
    p = 0.0
    for combo in itertools.product(*[list(v.items()) for _, _, _, v in strata]):
        value = sum(
            stat(xb, na, nb, t) for (xb, _), (na, nb, t, _) in zip(combo, strata, strict=True)
        )
        mass = 1.0
        for _, q in combo:
            mass *= q
        if abs(value) >= abs(observed):
            p += mass
    return p


def _per_stratum_p(strata, stat, observed, seed, draws):
    """The previous sampler: one pick per stratum per draw."""
    rng = random.Random(seed)
    tables = []
    for na, nb, t, values in strata:
        cumulative = list(itertools.accumulate(values[x] for x in values))
        tables.append(([stat(x, na, nb, t) for x in values], cumulative))
    hits = 0
    for _ in range(draws):
        value = sum(
            p[min(bisect.bisect_right(c, rng.random() * c[-1]), len(p) - 1)] for p, c in tables
        )
        hits += abs(value) >= abs(observed)
    return (hits + 1) / (draws + 1)


def test_grouped_estimate_matches_exact_enumeration():
    # 8 tasks in three groups with repeats, 2 with fixed outcomes
    pairs = [(1, 3, 3, 3)] * 3 + [(2, 4, 0, 2)] * 2 + [(0, 2, 2, 3), (3, 3, 2, 2), (0, 3, 0, 3)]
    strata, stat, observed = _strata(pairs)
    exact = _enumerated_p(pairs)
    estimate = significance._monte_carlo_p(strata, stat, observed, significance.TWO_SIDED)
    se = (exact * (1 - exact) / significance.MONTE_CARLO_DRAWS) ** 0.5
    assert 0.01 < exact < 0.99
    assert abs(estimate - exact) < 4 * se + 1 / significance.MONTE_CARLO_DRAWS


def test_grouped_estimate_has_the_per_stratum_sampler_law(monkeypatch):
    # 300 tasks, groups larger than one chunk: compare p over seeds with the old sampler
    rng = random.Random(5)
    pairs = []
    for _ in range(300):
        na, nb = rng.choice([(5, 5), (4, 6), (5, 5)])
        hits = [sum(rng.random() < 0.7 for _ in range(n)) for n in (na, nb)]
        pairs.append((hits[0], na, hits[1], nb))
    strata, stat, observed = _strata(pairs)
    draws = 2000
    monkeypatch.setattr(significance, "MONTE_CARLO_DRAWS", draws)
    grouped, old = [], []
    for seed in range(12):
        monkeypatch.setattr(significance, "MONTE_CARLO_SEED", seed)
        grouped.append(significance._monte_carlo_p(strata, stat, observed, significance.TWO_SIDED))
        old.append(_per_stratum_p(strata, stat, observed, 1000 + seed, draws))
    mean_g, mean_o = statistics.mean(grouped), statistics.mean(old)
    assert 0.02 < mean_o < 0.98
    se = (statistics.variance(grouped) / 12 + statistics.variance(old) / 12) ** 0.5
    assert abs(mean_g - mean_o) < 4 * se + 0.004


def test_grouped_estimate_is_deterministic():
    pairs = [(1, 3, 3, 3)] * 70 + [(2, 4, 1, 2)] * 5
    strata, stat, observed = _strata(pairs)
    first = significance._monte_carlo_p(strata, stat, observed, significance.LESS)
    assert first == significance._monte_carlo_p(strata, stat, observed, significance.LESS)
