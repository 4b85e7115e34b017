"""Two-sided permutation tests on a difference of means, for continuous per-attempt data.

``compare`` tests a change of cost or agent time with these (rates use Fisher's test). Under
the null hypothesis that both runs' attempts come from one distribution, every split of the
pooled values into groups of the observed sizes is equally likely; the p-value is the share
of splits whose ``|mean(b) − mean(a)|`` is at least the observed one. It is enumerated
exactly when there are at most :data:`EXACT_LIMIT` splits, else estimated from
:data:`DRAWS` random splits (a fixed seed, so a comparison always gives the same p) as
``(hits + 1) / (draws + 1)``, which never understates the p-value's validity.

The stratified form (a whole run) permutes within each task and tests the mean over tasks
of the per-task differences of means. Drawing splits costs one shuffle per task per draw, so
a run of more than ``MC_WORK / DRAWS`` (100) tasks is tested on the statistic's normal
approximation instead, with its exact permutation mean (0) and variance: a sum over that
many independent tasks. Tasks tested one by one (:func:`each_permutation_p`) share
:data:`FAMILY_WORK` draws between those that need an estimate. Pure functions, standard library
only.
"""

from __future__ import annotations

import functools
import itertools
import math
import operator
import random
from collections.abc import Callable, Sequence
from typing import Any

EXACT_LIMIT = 20_000
"""At most this many splits (the product over tasks when stratified) are enumerated."""
DRAWS = 2_000
"""Random splits drawn beyond :data:`EXACT_LIMIT`."""
MC_WORK = 200_000
"""Random splits of single tasks one stratified test may draw (about a second):
:data:`DRAWS` draws of 100 tasks. A test of more tasks takes the normal approximation."""
FAMILY_WORK = 100_000
"""Random splits the per-task tests of one family share (:func:`each_permutation_p`)."""
MIN_DRAWS = 19
"""The fewest draws a task's estimate gets when many tasks share :data:`FAMILY_WORK` (its p
is then at least 0.05: valid, coarse)."""
SEED = 20261203
GETTER_WORK = 400_000
"""Most pooled positions (values × draws) one stratum's seeded splits are kept for
(:func:`_split_getters`); a bigger stratum is shuffled draw by draw."""
_TOLERANCE = 1e-9


def _difference(total: float, sum_b: float, n_a: int, n_b: int) -> float:
    return sum_b / n_b - (total - sum_b) / n_a


def _task_differences(a: Sequence[float], b: Sequence[float]) -> list[float]:
    """Every split's ``mean(b) − mean(a)`` (``C(n_a + n_b, n_b)`` values)."""
    pooled = [*a, *b]
    total = math.fsum(pooled)
    return [
        _difference(total, math.fsum(pooled[i] for i in chosen), len(a), len(b))
        for chosen in itertools.combinations(range(len(pooled)), len(b))
    ]


def _drawn_hits(
    kept: Sequence[tuple[Sequence[float], Sequence[float]]], observed: float, draws: int
) -> int:
    """How many of ``draws`` seeded random splits reach ``observed``. A draw shuffles each
    stratum's pooled values (before, then after), in stratum order, takes the first
    ``len(after)`` as the after side, and sums the strata's ``mean(after) − mean(before)``.
    Each stratum's pooled list and total are made once (a shuffle does not change ``fsum``,
    which is correctly rounded in any order). One stratum's splits are picked by
    :func:`_split_getters` (the same splits, made once per shape of stratum)."""
    fsum = math.fsum
    bar = observed - _TOLERANCE * max(1.0, observed)
    if len(kept) == 1 and (len(kept[0][0]) + len(kept[0][1])) * draws <= GETTER_WORK:
        (a, b), hits = kept[0], 0
        base, size_a, size_b = [*a, *b], len(a), len(b)
        total = fsum(base)
        for after in _split_getters(len(base), size_b, draws):
            chosen = fsum(after(base))
            hits += abs(chosen / size_b - (total - chosen) / size_a) >= bar
        return hits
    rng = random.Random(SEED)
    shuffle = rng.shuffle
    prepared = [([*a, *b], fsum([*a, *b]), len(a), len(b)) for a, b in kept]
    hits = 0
    for _ in range(draws):
        differences = []
        for base, total, size_a, size_b in prepared:
            pooled = base[:]
            shuffle(pooled)
            chosen = fsum(pooled[:size_b])
            differences.append(chosen / size_b - (total - chosen) / size_a)
        hits += abs(fsum(differences)) >= bar
    return hits


@functools.lru_cache(maxsize=8)
def _split_getters(size: int, size_b: int, draws: int) -> tuple[Callable[[list], Any], ...]:
    """The after side of each of ``draws`` seeded random splits of one stratum of ``size``
    pooled values, ``size_b`` of them after, as functions picking those values from the
    pooled list: the splits :func:`_drawn_hits` draws (a shuffle's swaps depend only on the
    list's length, so shuffling the positions picks the values shuffling the values would).
    Made once per shape: every task of that shape is tested on the same seeded splits."""
    rng = random.Random(SEED)
    getters = []
    for _ in range(draws):
        order = list(range(size))
        rng.shuffle(order)
        picked = order[:size_b]
        if size_b == 1:
            getters.append(lambda pooled, at=picked[0]: (pooled[at],))
        else:
            getters.append(operator.itemgetter(*picked))
    return tuple(getters)


def permutation_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    """The two-sided permutation p-value of ``mean(b) − mean(a)`` (``None``: a side is
    empty)."""
    return stratified_permutation_p([(a, b)])


def stratified_permutation_p(
    strata: Sequence[tuple[Sequence[float], Sequence[float]]], *, draws: int = DRAWS
) -> float | None:
    """The two-sided p-value of the mean over strata of ``mean(b) − mean(a)``, permuting
    within each stratum; strata with an empty side are left out (``None``: none is left).

    Exact up to :data:`EXACT_LIMIT` splits; else estimated from ``draws`` seeded random
    splits when that is at most :data:`MC_WORK` draws of single strata; else (more than
    ``MC_WORK / draws`` strata) from the normal approximation (:func:`normal_p`)."""
    kept = [(list(a), list(b)) for a, b in strata if a and b]
    if not kept:
        return None
    observed = _observed(kept)
    if observed <= _TOLERANCE:
        return 1.0  # every split's |Δ| is at least 0
    splits = _splits(kept)
    if splits <= EXACT_LIMIT:
        return _exact(kept, observed, splits)
    if draws * len(kept) > MC_WORK:
        return normal_p(kept, observed)
    return (_drawn_hits(kept, observed, draws) + 1) / (draws + 1)


def each_permutation_p(
    pairs: Sequence[tuple[Sequence[float], Sequence[float]]],
) -> list[float | None]:
    """:func:`permutation_p` of each ``(a, b)`` pair (a family of per-task tests), the pairs
    that need an estimate sharing :data:`FAMILY_WORK` random splits: :data:`DRAWS` each
    while that is enough (50 such pairs), else an equal share, at least :data:`MIN_DRAWS`.

    With many tasks the share is small and a task's p coarse, but still valid; Holm's
    correction over that many tasks asks for a p no estimate of :data:`DRAWS` draws could
    reach anyway (below ``alpha / tasks``)."""
    estimated = sum(_needs_estimate(a, b) for a, b in pairs)
    share = FAMILY_WORK // estimated if estimated else DRAWS
    draws = min(DRAWS, max(MIN_DRAWS, share))
    return [stratified_permutation_p([(a, b)], draws=draws) for a, b in pairs]


def _needs_estimate(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether :func:`permutation_p` of ``a`` and ``b`` draws random splits (the choices
    :func:`stratified_permutation_p` makes for one stratum)."""
    kept = [(a, b)]
    return bool(a and b) and _splits(kept) > EXACT_LIMIT and _observed(kept) > _TOLERANCE


def _observed(kept: Sequence[tuple[Sequence[float], Sequence[float]]]) -> float:
    """``|Σ (mean(b) − mean(a))|`` over the strata."""
    return abs(math.fsum(math.fsum(b) / len(b) - math.fsum(a) / len(a) for a, b in kept))


def _splits(kept: Sequence[tuple[Sequence[float], Sequence[float]]]) -> int:
    """How many splits the strata have together (the product of each one's)."""
    return math.prod(math.comb(len(a) + len(b), len(b)) for a, b in kept)


def split_variance(a: Sequence[float], b: Sequence[float]) -> float:
    """The variance of ``mean(b) − mean(a)`` over every split of the pooled values into
    groups of ``len(a)`` and ``len(b)`` (its mean over them is 0):
    ``N · SS / (n_a · n_b · (N − 1))``, with ``SS`` the pooled sum of squared deviations.
    (Drawing ``n_b`` of ``N`` values without replacement, ``mean(b)`` has variance
    ``SS (N − n_b) / (n_b N (N − 1))``, and the difference is ``N / n_a`` times it.)"""
    pooled = [*a, *b]
    count = len(pooled)
    if count < 2:
        return 0.0
    centre = math.fsum(pooled) / count
    squares = math.fsum((value - centre) ** 2 for value in pooled)
    return count * squares / (len(a) * len(b) * (count - 1))


def normal_p(kept: Sequence[tuple[Sequence[float], Sequence[float]]], observed: float) -> float:
    """The two-sided p of ``observed`` (``|Σ (mean(b) − mean(a))|`` over the strata) on the
    normal law with the sum's exact permutation mean (0) and variance (the sum of each
    stratum's :func:`split_variance`, the strata being independent): accurate for a sum
    over many strata, none of which dominates."""
    variance = math.fsum(split_variance(a, b) for a, b in kept)
    if variance <= 0.0:
        return 1.0
    return min(1.0, math.erfc(observed / math.sqrt(2.0 * variance)))


def _exact(kept: list[tuple[list[float], list[float]]], observed: float, splits: int) -> float:
    """The exact p: the sum's distribution over every combination of per-stratum splits."""
    sums: list[float] = [0.0]
    for a, b in kept:
        sums = [s + d for s in sums for d in _task_differences(a, b)]
    hits = sum(1 for s in sums if abs(s) >= observed - _TOLERANCE * max(1.0, observed))
    return hits / splits
