"""Two-sided permutation tests on a difference of means, for continuous per-attempt data.

``compare`` tests a change of cost or agent time with these (rates use Fisher's test). Under
the null hypothesis that both runs' attempts come from one distribution, every split of the
pooled values into groups of the observed sizes is equally likely; the p-value is the share
of splits whose ``|mean(b) − mean(a)|`` is at least the observed one. It is enumerated
exactly when there are at most :data:`EXACT_LIMIT` splits, else estimated from
:data:`DRAWS` random splits (a fixed seed, so a comparison always gives the same p) as
``(hits + 1) / (draws + 1)``, which never understates the p-value's validity.

The stratified form (a whole run) permutes within each task and tests the mean over tasks
of the per-task differences of means. Pure functions, standard library only.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

EXACT_LIMIT = 20_000
"""At most this many splits (the product over tasks when stratified) are enumerated."""
DRAWS = 2_000
"""Random splits drawn beyond :data:`EXACT_LIMIT`."""
SEED = 20261203
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


def _random_difference(rng: random.Random, a: Sequence[float], b: Sequence[float]) -> float:
    pooled = [*a, *b]
    rng.shuffle(pooled)
    return _difference(math.fsum(pooled), math.fsum(pooled[: len(b)]), len(a), len(b))


def permutation_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    """The two-sided permutation p-value of ``mean(b) − mean(a)`` (``None``: a side is
    empty)."""
    return stratified_permutation_p([(a, b)])


def stratified_permutation_p(
    strata: Sequence[tuple[Sequence[float], Sequence[float]]],
) -> float | None:
    """The two-sided p-value of the mean over strata of ``mean(b) − mean(a)``, permuting
    within each stratum; strata with an empty side are left out (``None``: none is left)."""
    kept = [(list(a), list(b)) for a, b in strata if a and b]
    if not kept:
        return None
    observed = abs(math.fsum(math.fsum(b) / len(b) - math.fsum(a) / len(a) for a, b in kept))
    if observed <= _TOLERANCE:
        return 1.0  # every split's |Δ| is at least 0
    splits = math.prod(math.comb(len(a) + len(b), len(b)) for a, b in kept)
    if splits <= EXACT_LIMIT:
        return _exact(kept, observed, splits)
    rng = random.Random(SEED)
    hits = 0
    for _ in range(DRAWS):
        value = abs(math.fsum(_random_difference(rng, a, b) for a, b in kept))
        hits += value >= observed - _TOLERANCE * max(1.0, observed)
    return (hits + 1) / (DRAWS + 1)


def _exact(kept: list[tuple[list[float], list[float]]], observed: float, splits: int) -> float:
    """The exact p: the sum's distribution over every combination of per-stratum splits."""
    sums: list[float] = [0.0]
    for a, b in kept:
        sums = [s + d for s in sums for d in _task_differences(a, b)]
    hits = sum(1 for s in sums if abs(s) >= observed - _TOLERANCE * max(1.0, observed))
    return hits / splits
