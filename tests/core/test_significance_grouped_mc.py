"""The grouped Monte Carlo estimate of the whole-run test against independent references:
exact enumeration on small cases, and the per-stratum sampler on medium cases."""

from __future__ import annotations

import bisect
import itertools
import math
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


def _looped_hits(constant, tables, observed, alternative):
    """The draws as a plain loop over draws and tables (uniform × total weight, its place
    in the cumulative weights, the last point for a place past the end)."""
    draw = random.Random(significance.MONTE_CARLO_SEED).random
    hits = 0
    for _ in range(significance.MONTE_CARLO_DRAWS):
        value = constant
        for points, cumulative, total in tables:
            place = bisect.bisect_right(cumulative, draw() * total)
            value += points[min(place, len(cumulative) - 1)]
        if alternative == significance.LESS:
            hits += value <= observed
        elif alternative == significance.GREATER:
            hits += value >= observed
        else:
            hits += abs(value) >= abs(observed)
    return hits


def test_the_draws_count_the_hits_a_plain_loop_counts(monkeypatch):
    # the chained-iterator draws against a loop over draws and tables, on the tables the
    # estimate builds for random runs (several groups, chunks and a fixed part)
    monkeypatch.setattr(significance, "MONTE_CARLO_DRAWS", 3000)
    rng = random.Random(11)
    for case in range(6):
        pairs = []
        for _ in range(rng.choice([40, 150, 400])):
            na, nb = rng.choice([(5, 5), (3, 4), (10, 10), (2, 6)])
            rate = rng.choice([0.0, 0.3, 0.8, 1.0])
            pairs.append((sum(rng.random() < rate for _ in range(na)), na,
                          sum(rng.random() < rate * 0.9 for _ in range(nb)), nb))  # fmt: skip
        strata, stat, observed = _strata(pairs)
        seen = []
        real = significance._monte_carlo_hits

        def capture(constant, tables, obs, alternative, seen=seen, real=real):
            seen.append((constant, tables))
            return real(constant, tables, obs, alternative)

        monkeypatch.setattr(significance, "_monte_carlo_hits", capture)
        for alternative in significance.ALTERNATIVES:
            p = significance._monte_carlo_p(strata, stat, observed + case % 3, alternative)
            constant, tables = seen[-1]
            assert tables, "the case must draw"
            looped = _looped_hits(constant, tables, observed + case % 3, alternative)
            assert p == (looped + 1) / (significance.MONTE_CARLO_DRAWS + 1)
        monkeypatch.setattr(significance, "_monte_carlo_hits", real)


def test_a_uniform_past_the_cumulative_weights_reads_the_last_point(monkeypatch):
    # total weight above the last cumulative weight: most uniforms land past the end
    monkeypatch.setattr(significance, "MONTE_CARLO_DRAWS", 500)
    tables = [([-3, 5, 5], [0.25, 0.5], 4.0), ([1, 2, 7, 7], [0.1, 0.2, 0.3], 1.0)]
    for alternative in significance.ALTERNATIVES:
        for observed in (-2, 3, 6, 12):
            expected = _looped_hits(0, tables, observed, alternative)
            assert significance._monte_carlo_hits(0, tables, observed, alternative) == expected


def test_a_run_of_fixed_strata_draws_the_constant_every_time(monkeypatch):
    monkeypatch.setattr(significance, "MONTE_CARLO_DRAWS", 100)
    assert significance._monte_carlo_hits(4, [], 4, significance.LESS) == 100
    assert significance._monte_carlo_hits(4, [], 3, significance.LESS) == 0
    assert significance._monte_carlo_hits(-4, [], 4, significance.TWO_SIDED) == 100
    assert significance._monte_carlo_hits(4, [], 5, significance.GREATER) == 0


def test_doubled_chunk_laws_are_the_convolved_laws():
    weights = [0.25, 0.5, 0.25]
    for count in (64, 127, 128, 200, 700, 1100):
        chunks = significance._chunk_laws(weights, count)
        assert sum(size for size, _ in chunks) == count
        for size, law in chunks:
            assert len(law) <= significance.MONTE_CARLO_POINTS
            # the law of `size` draws of 0/1/2 with those weights: Binomial(2·size, 1/2)
            expected = [math.comb(2 * size, k) / 4**size for k in range(2 * size + 1)]
            assert max(abs(x - y) for x, y in zip(law, expected, strict=True)) < 1e-12
    assert {size for size, _ in significance._chunk_laws(weights, 1100)} == {512, 64, 12}
    # 5,000 = 4 · 1,024 + 512 + 256 + 128 + 8
    assert len(significance._chunk_laws([0.5, 0.5], 5000)) == 4 + 3 + 1


def _half_binomial_law(count):
    """Binomial(count, 1/2), each mass an exact ratio of integers rounded once."""
    return [math.comb(count, k) / 2**count for k in range(count + 1)]


def test_an_estimate_over_thousands_of_strata_agrees_with_the_exact_p():
    # 3,000 tasks of 10 + 10 attempts with one success between the runs (after side: 0 or 1,
    # each half likely) and 1,100 with one failure (after side: 9 or 10): the statistic is
    # 2·(successes after − ones expected), so its law is that of two binomial counts
    pairs = [(1, 10, 0, 10)] * 1530 + [(0, 10, 1, 10)] * 1470
    pairs += [(10, 10, 9, 10)] * 575 + [(9, 10, 10, 10)] * 525 + [(10, 10, 10, 10)] * 400
    strata, stat, observed = _strata(pairs)
    ones, nines = _half_binomial_law(3000), _half_binomial_law(1100)
    exact = 0.0
    for k, mass in enumerate(ones):  # k successes after among the 3,000
        for j, other in enumerate(nines):  # j of the 1,100 with all 10 after
            value = stat(1, 10, 10, 1) * k + stat(0, 10, 10, 1) * (3000 - k)
            value += stat(10, 10, 10, 19) * j + stat(9, 10, 10, 19) * (1100 - j)
            if abs(value) >= abs(observed):
                exact += mass * other
    assert 0.02 < exact < 0.5
    estimate = significance._monte_carlo_p(strata, stat, observed, significance.TWO_SIDED)
    se = (exact * (1 - exact) / significance.MONTE_CARLO_DRAWS) ** 0.5
    assert abs(estimate - exact) < 4 * se + 1 / significance.MONTE_CARLO_DRAWS
