"""Tests that tell a real change from noise: pure functions, standard library only.

* :func:`fisher_exact`: Fisher's exact test on two binomial samples (one task, before vs
  after);
* :func:`stratified_exact_test`: an exact stratified permutation test of the mean over tasks
  of the change in rate (the whole run, paired by task);
* :func:`holm_adjust`: Holm's step-down correction for testing many tasks at once.

``docs/statistics.md`` explains each in plain words; the unit tests check them against
published examples.
"""

from __future__ import annotations

import bisect
import itertools
import math
import operator
import random
from collections.abc import Iterator, Sequence
from functools import reduce

# Relative slack when comparing probabilities of tables, as R's fisher.test does (1 + 1e-7).
RELATIVE_TOLERANCE = 1e-7
# The exact stratified test keeps at most this many distinct values of the statistic; beyond
# it (very unequal k across many tasks) a seeded Monte Carlo estimate is used instead.
MAX_EXACT_SUPPORT = 200_000
MAX_EXACT_WORK = 2_000_000  # products of support sizes one convolution step may take
# the whole convolution's work (about a second of CPU); beyond it the seeded estimate is used
MAX_EXACT_TOTAL_WORK = 3_000_000
MONTE_CARLO_DRAWS = 20_000
MONTE_CARLO_SEED = 20261201

TWO_SIDED = "two-sided"
LESS = "less"  # after is lower than before
GREATER = "greater"  # after is higher than before
ALTERNATIVES = (TWO_SIDED, LESS, GREATER)


def _log_comb(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def hypergeometric_pmf(total: int, drawn: int, successes: int) -> dict[int, float]:
    """``P(X = x)`` for the successes ``X`` among ``drawn`` items taken without replacement
    from ``total`` items of which ``successes`` are successes (every ``x`` with mass)."""
    low = max(0, drawn - (total - successes))
    high = min(drawn, successes)
    denominator = _log_comb(total, drawn)
    return {
        x: math.exp(_log_comb(successes, x) + _log_comb(total - successes, drawn - x) - denominator)
        for x in range(low, high + 1)
    }


def _check_counts(successes: int, trials: int) -> None:
    if trials < 0 or successes < 0 or successes > trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes}/{trials}")


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(ALTERNATIVES)}")


def fisher_exact(
    a_successes: int,
    a_trials: int,
    b_successes: int,
    b_trials: int,
    alternative: str = TWO_SIDED,
) -> float:
    """Fisher's exact test of "the same pass chance before (a) and after (b)".

    Conditional on the total number of successes, the after-side's successes follow a
    hypergeometric law. ``two-sided`` sums the probability of every table no more likely than
    the one seen (as R's ``fisher.test``); ``less`` is the chance of after-successes this low
    or lower (a drop), ``greater`` this high or higher. ``1.0`` when a side has no trials.
    """
    _check_counts(a_successes, a_trials)
    _check_counts(b_successes, b_trials)
    _check_alternative(alternative)
    if a_trials == 0 or b_trials == 0:
        return 1.0
    pmf = hypergeometric_pmf(a_trials + b_trials, b_trials, a_successes + b_successes)
    seen = pmf[b_successes]
    if alternative == LESS:
        p = math.fsum(q for x, q in pmf.items() if x <= b_successes)
    elif alternative == GREATER:
        p = math.fsum(q for x, q in pmf.items() if x >= b_successes)
    else:
        p = math.fsum(q for q in pmf.values() if q <= seen * (1.0 + RELATIVE_TOLERANCE))
    return min(1.0, p)


def _lcm(values: Sequence[int]) -> int:
    return reduce(lambda a, b: a * b // math.gcd(a, b), values, 1)


def stratified_exact_test(
    pairs: Sequence[tuple[int, int, int, int]], alternative: str = TWO_SIDED
) -> float:
    """A stratified permutation test of the mean over tasks of ``rate_after − rate_before``.

    ``pairs`` holds ``(a_successes, a_trials, b_successes, b_trials)`` per task; tasks with an
    empty side are skipped (``1.0`` when none is left). Under "nothing changed", within each
    task the before/after labels of its attempts are exchangeable: given each task's total
    successes, the after-side's successes are hypergeometric, independently across tasks. The
    statistic's exact distribution is the convolution of those, so the p-value is exact and
    needs no seed; only when the convolution would cost more than
    :data:`MAX_EXACT_TOTAL_WORK` (unequal attempt counts across many tasks make the lattice
    fine), or its support grows past :data:`MAX_EXACT_SUPPORT`, is it estimated from
    :data:`MONTE_CARLO_DRAWS` seeded draws (standard error at most 0.0036). ``two-sided``
    compares ``|D|`` (the statistic's null mean is 0), ``less`` tests a drop, ``greater`` a
    rise.
    """
    _check_alternative(alternative)
    kept = [p for p in pairs if p[1] > 0 and p[3] > 0]
    if not kept:
        return 1.0
    for xa, na, xb, nb in kept:
        _check_counts(xa, na)
        _check_counts(xb, nb)
    # integer statistic: L * Σ (xb/nb − xa/na), with L a common multiple of every trial count
    scale = _lcm([n for _, na, _, nb in kept for n in (na, nb)])
    strata = []
    for xa, na, xb, nb in kept:
        total = xa + xb
        values = {x: q for x, q in hypergeometric_pmf(na + nb, nb, total).items()}
        strata.append((na, nb, total, values))

    def statistic(xb: int, na: int, nb: int, total: int) -> int:
        return xb * (scale // nb) - (total - xb) * (scale // na)

    observed = sum(statistic(xb, na, nb, xa + xb) for xa, na, xb, nb in kept)
    if _exact_cost(strata, statistic) > MAX_EXACT_TOTAL_WORK:
        # the lattice of the statistic is too fine (unequal attempt counts across many
        # tasks): the exact convolution would take seconds, so use the seeded estimate
        return _monte_carlo_p(strata, statistic, observed, alternative)
    distribution: dict[int, float] | None = {0: 1.0}
    for na, nb, total, values in strata:
        if len(distribution) * len(values) > MAX_EXACT_WORK:
            distribution = None
            break
        step: dict[int, float] = {}
        for value, mass in distribution.items():
            for xb, q in values.items():
                key = value + statistic(xb, na, nb, total)
                step[key] = step.get(key, 0.0) + mass * q
        distribution = step
        if len(distribution) > MAX_EXACT_SUPPORT:
            distribution = None
            break
    if distribution is None:
        return _monte_carlo_p(strata, statistic, observed, alternative)
    return _tail(distribution.items(), observed, alternative)


def _exact_cost(strata, statistic) -> int:
    """An upper bound on the work of the exact convolution: the sum over strata of (distinct
    values so far) × (the stratum's support size), each count of distinct values bounded by
    the smaller of the product of support sizes and the span of the lattice (every value is a
    multiple of the gcd of the steps, between the sums of minima and of maxima)."""
    product, low, high, step, work = 1, 0, 0, 0, 0
    for na, nb, total, values in strata:
        points = [statistic(xb, na, nb, total) for xb in values]
        span = (high - low) // step + 1 if step else 1
        work += min(product, span) * len(points)
        product = min(product * len(points), MAX_EXACT_SUPPORT + 1)
        low, high = low + min(points), high + max(points)
        for value in points:
            step = math.gcd(step, value - points[0])
        if work > MAX_EXACT_TOTAL_WORK:
            break
    return work


def _tail(items, observed: int, alternative: str) -> float:
    if alternative == LESS:
        p = math.fsum(q for v, q in items if v <= observed)
    elif alternative == GREATER:
        p = math.fsum(q for v, q in items if v >= observed)
    else:
        p = math.fsum(q for v, q in items if abs(v) >= abs(observed))
    return min(1.0, p)


# strata of one group are drawn this many at a time from their exactly convolved sum
MONTE_CARLO_CHUNK = 64
MONTE_CARLO_POINTS = 1025
"""A big group's chunks are doubled (128, 256, … strata) while their law has at most this
many points: fewer picks a draw, each from a longer table."""


def _convolve_power(weights: list[float], count: int) -> list[float]:
    """The law of the sum of ``count`` independent draws from ``weights`` (index = value)."""
    result = [1.0]
    for _ in range(count):
        result = _convolve(result, weights)
    return result


def _convolve(first: list[float], second: list[float]) -> list[float]:
    """The law of the sum of two independent values with laws ``first`` and ``second``."""
    step = [0.0] * (len(first) + len(second) - 1)
    for i, mass in enumerate(first):
        if mass:
            for j, q in enumerate(second):
                step[i + j] += mass * q
    return step


def _chunk_laws(weights: list[float], count: int) -> list[tuple[int, list[float]]]:
    """``(strata, law of their summed count)`` of each chunk a group of ``count`` strata with
    law ``weights`` is cut into: chunks of :data:`MONTE_CARLO_CHUNK` strata, doubled by
    convolving a chunk's law with itself while the group has that many strata and the law
    stays within :data:`MONTE_CARLO_POINTS` points; the strata are taken in the largest
    chunks made that fit, and the last fewer than :data:`MONTE_CARLO_CHUNK` in one."""
    chunks: list[tuple[int, list[float]]] = []
    full, rest = divmod(count, MONTE_CARLO_CHUNK)
    if full:
        made = [(MONTE_CARLO_CHUNK, _convolve_power(weights, MONTE_CARLO_CHUNK))]
        while made[-1][0] * 2 <= count and 2 * len(made[-1][1]) - 1 <= MONTE_CARLO_POINTS:
            size, law = made[-1]
            made.append((size * 2, _convolve(law, law)))
        left = count - rest
        for size, law in reversed(made):
            times, left = divmod(left, size)
            chunks += [(size, law)] * times
    if rest:
        chunks.append((rest, _convolve_power(weights, rest)))
    return chunks


def _monte_carlo_p(strata, statistic, observed: int, alternative: str) -> float:
    """The p-value estimated from :data:`MONTE_CARLO_DRAWS` seeded draws of the strata
    (``(hits + 1) / (draws + 1)``, never 0).

    Strata with the same ``(n_a, n_b, total successes)`` share one null law, so they are
    grouped; each group is cut into chunks (:func:`_chunk_laws`), and each draw picks every
    chunk's summed after-side count from its exactly convolved law by inverting its
    cumulative weights (the statistic is linear in that count). Strata whose count is fixed
    add a constant. A draw costs one pick per chunk, not per task."""
    groups: dict[tuple[int, int, int], list] = {}
    for na, nb, total, values in strata:
        groups.setdefault((na, nb, total), [values, 0])[1] += 1
    constant = 0
    tables = []
    for (na, nb, total), (values, count) in groups.items():
        low = min(values)
        if len(values) == 1:
            constant += count * statistic(low, na, nb, total)
            continue
        weights = [values.get(x, 0.0) for x in range(low, max(values) + 1)]
        slope = statistic(low + 1, na, nb, total) - statistic(low, na, nb, total)
        base = statistic(low, na, nb, total)
        made: dict[int, tuple] = {}
        for size, law in _chunk_laws(weights, count):
            if size not in made:
                points = [size * base + slope * k for k in range(len(law))]
                cumulative, running = [], 0.0
                for mass in law:
                    running += mass
                    cumulative.append(running)
                # the points padded with the last one: a uniform at the very top of the
                # cumulative weights finds the index one past the end, which reads the last
                # point
                made[size] = (points + points[-1:], cumulative, running)
            tables.append(made[size])
    return (_monte_carlo_hits(constant, tables, observed, alternative) + 1) / (
        MONTE_CARLO_DRAWS + 1
    )


def _monte_carlo_hits(constant: int, tables: list, observed: int, alternative: str) -> int:
    """How many of the :data:`MONTE_CARLO_DRAWS` seeded draws reach ``observed``.

    ``tables`` holds ``(points, cumulative weights, total weight)`` per chunk. Draw ``d``
    takes one uniform ``u`` per table, in table order (the generator's number
    ``d × len(tables) + j`` for table ``j``), and adds ``points[bisect_right(cumulative,
    u × total)]`` of each table to ``constant``. The uniforms, lookups and sums run as chained
    iterators, not as a Python loop per table and draw."""
    rng = random.Random(MONTE_CARLO_SEED)
    width = len(tables)
    if not width:  # every stratum fixed: every draw is the constant
        values: Iterator[int] = itertools.repeat(constant, MONTE_CARLO_DRAWS)
    else:
        uniforms = itertools.starmap(rng.random, itertools.repeat((), width * MONTE_CARLO_DRAWS))
        scaled = map(operator.mul, uniforms, itertools.cycle([table[2] for table in tables]))
        cumulatives = itertools.cycle([table[1] for table in tables])
        picked = map(
            operator.getitem,
            itertools.cycle([table[0] for table in tables]),
            map(bisect.bisect_right, cumulatives, scaled),
        )
        # draw d: the picks d·width … d·width + width − 1
        rows = zip(*[picked] * width, strict=False)
        values = map(sum, rows, itertools.repeat(constant))
    if alternative == LESS:
        return sum(map(operator.le, values, itertools.repeat(observed)))
    if alternative == GREATER:
        return sum(map(operator.ge, values, itertools.repeat(observed)))
    return sum(map(operator.ge, map(abs, values), itertools.repeat(abs(observed))))


def holm_adjust(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    Sort the ``m`` p-values; the ``i``-th smallest (from 1) is multiplied by ``m − i + 1``,
    each adjusted value is at least the one before it, and none exceeds 1. A hypothesis is
    rejected at level α when its adjusted p-value is at most α; the chance of rejecting any
    true one is then at most α, whatever the dependence between the tests.
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def gatekept_adjust(overall_p: float, task_p: list[float]) -> tuple[float, list[float]]:
    """Adjusted p-values of the fixed-sequence (gatekeeping) procedure compare uses.

    The whole-run test comes first, at the full level: its adjusted p is its own p. The
    per-task tests are examined only within it, with Holm's correction over the tasks, so a
    task's adjusted p is the larger of the whole-run p and its Holm-adjusted p. Rejecting
    every hypothesis whose adjusted p is at most α keeps the chance of any false rejection
    (the whole run or any task) at most α whatever the truth: when nothing changed only the
    whole-run test can open the gate (chance ≤ α), and when something changed the per-task
    rejections are a subset of Holm's, which alone controls that chance.
    """
    holm = holm_adjust(task_p)
    return overall_p, [max(overall_p, p) for p in holm]
