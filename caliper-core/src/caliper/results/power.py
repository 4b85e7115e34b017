"""How big a change a pair of runs could detect: power of compare's tests. Pure, stdlib only.

A pair that found "no supported regression" may simply be too small to see one. These
functions say how small: the smallest drop each of compare's tests would catch with a given
chance (``power``, 80% by default) at its significance level, and the k that would catch a
given drop. ``docs/statistics.md`` has the table they generate.

* One task (Fisher's exact test): computed exactly, summing the binomial chances of every
  pair of outcomes the test rejects.
* The whole run (the stratified test, a drop of the same size on every task): the normal
  approximation of the mean of the per-task changes, with a continuity correction of one
  lattice step; a seeded simulation in the tests checks it against the exact test.
"""

from __future__ import annotations

import bisect
import functools
import math
from statistics import NormalDist

from caliper.results.significance import RELATIVE_TOLERANCE, hypergeometric_pmf

DEFAULT_POWER = 0.80
DEFAULT_BASELINE = 0.80
STEP = 0.01  # drops are searched in whole points
MAX_K = 1000
EXACT_SEARCH_MAX_K = 60  # one task: k found exactly up to here, by approximation beyond


def _binomial(n: int, p: float) -> list[float]:
    return [math.comb(n, x) * p**x * (1.0 - p) ** (n - x) for x in range(n + 1)]


@functools.cache
def _drop_region(a_trials: int, b_trials: int, alpha: float) -> tuple[tuple[int, int], ...]:
    """The ``(a_successes, b_successes)`` pairs Fisher's two-sided test calls a drop.

    For each total of successes the hypergeometric law is computed once and every table's
    two-sided p read from it (the same rule as :func:`fisher_exact`), so the region costs
    O(k² log k) rather than a test per table.
    """
    region = []
    for total in range(a_trials + b_trials + 1):
        pmf = hypergeometric_pmf(a_trials + b_trials, b_trials, total)
        masses = sorted(pmf.values())
        for xb, seen in pmf.items():
            xa = total - xb
            if not xb * a_trials < xa * b_trials:
                continue
            limit = seen * (1.0 + RELATIVE_TOLERANCE)
            p = math.fsum(m for m in masses[: bisect.bisect_right(masses, limit)])
            if p <= alpha:
                region.append((xa, xb))
    return tuple(region)


def task_power(a_trials: int, b_trials: int, before: float, after: float, alpha: float) -> float:
    """The chance that Fisher's two-sided test at ``alpha`` flags a drop for one task whose
    pass chance moves from ``before`` to ``after`` (``a_trials``/``b_trials`` attempts)."""
    region = _drop_region(a_trials, b_trials, alpha)
    if not region:
        return 0.0
    pa, pb = _binomial(a_trials, before), _binomial(b_trials, after)
    return math.fsum(pa[xa] * pb[xb] for xa, xb in region)


def _scan_drops(baseline: float):
    steps = round(baseline / STEP)
    for i in range(1, steps + 1):
        yield round(i * STEP, 10)


def task_detectable_drop(
    a_trials: int,
    b_trials: int,
    alpha: float,
    *,
    baseline: float = DEFAULT_BASELINE,
    power: float = DEFAULT_POWER,
) -> float | None:
    """The smallest drop from ``baseline`` (in steps of 0.01) that one task's test catches
    with chance ``power``; ``None`` when no drop, not even to 0, would be caught."""
    for drop in _scan_drops(baseline):
        if task_power(a_trials, b_trials, baseline, baseline - drop, alpha) >= power:
            return drop
    return None


def overall_power(
    tasks: int,
    a_trials: float,
    b_trials: float,
    before: float,
    after: float,
    alpha: float,
    *,
    approximate: bool = False,
) -> float:
    """The chance that the stratified test at ``alpha`` (two-sided) flags a drop when every
    one of ``tasks`` tasks moves from ``before`` to ``after``: exact for one task with whole
    attempt counts (the test is then Fisher's) unless ``approximate``, else the normal
    approximation."""
    if tasks < 1 or a_trials <= 0 or b_trials <= 0:
        return 0.0
    whole = float(a_trials).is_integer() and float(b_trials).is_integer()
    if tasks == 1 and whole and not approximate:
        return task_power(int(a_trials), int(b_trials), before, after, alpha)
    drop = before - after
    pooled = (a_trials * before + b_trials * after) / (a_trials + b_trials)
    null_sd = math.sqrt(pooled * (1 - pooled) * (1 / a_trials + 1 / b_trials) / tasks)
    alt_sd = math.sqrt((before * (1 - before) / a_trials + after * (1 - after) / b_trials) / tasks)
    if alt_sd == 0.0:
        return 1.0 if drop > 0 else 0.0
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    # continuity correction: one step of the lattice the mean change moves on (1 / (T k)),
    # which brings the approximation in line with the exact, discrete test (checked by
    # simulation in the test suite)
    step = (1.0 / a_trials + 1.0 / b_trials) / (2.0 * tasks)
    return NormalDist().cdf((drop - z * null_sd - step) / alt_sd)


def overall_detectable_drop(
    tasks: int,
    a_trials: float,
    b_trials: float,
    alpha: float,
    *,
    baseline: float = DEFAULT_BASELINE,
    power: float = DEFAULT_POWER,
) -> float | None:
    """The smallest drop from ``baseline`` on every task that the whole-run test catches with
    chance ``power``; ``None`` when none would be."""
    for drop in _scan_drops(baseline):
        if overall_power(tasks, a_trials, b_trials, baseline, baseline - drop, alpha) >= power:
            return drop
    return None


def attempts_needed(
    drop: float,
    tasks: int,
    alpha: float,
    *,
    baseline: float = DEFAULT_BASELINE,
    power: float = DEFAULT_POWER,
    max_k: int = MAX_K,
) -> int | None:
    """The smallest k (on both sides) at which the whole-run test catches a drop of ``drop``
    on every one of ``tasks`` tasks with chance ``power``; ``None`` past ``max_k``. For one
    task the exact power of Fisher's test decides, up to :data:`EXACT_SEARCH_MAX_K`."""
    if drop <= 0 or drop > baseline or tasks < 1:
        return None
    after = baseline - drop
    approx = None
    for k in range(1, max_k + 1):
        if overall_power(tasks, k, k, baseline, after, alpha, approximate=True) >= power:
            approx = k
            break
    if approx is None or tasks > 1 or approx > EXACT_SEARCH_MAX_K:
        return approx  # beyond EXACT_SEARCH_MAX_K the approximation stands (exact is slow)
    # one task: the exact test's power saw-tooths around the approximation; scan exactly
    # from half of it (the exact test is never twice as strong as the approximation)
    for k in range(max(1, approx // 2), max_k + 1):
        if task_power(k, k, baseline, after, alpha) >= power:
            return k
    return None


def family_alpha(alpha: float, tests: int) -> float:
    """The level the first (smallest) p-value of ``tests`` must clear under Holm: α / m."""
    return alpha / max(1, tests)


TABLE_KS = (3, 5, 10, 20, 30)
TABLE_TASKS = (1, 3, 5, 10, 20)
POWER_KS = (3, 5, 10, 20)
POWER_BEFORE, POWER_AFTER = 0.8, 0.6


def detectable_drop_table(
    ks: tuple[int, ...] = TABLE_KS,
    task_counts: tuple[int, ...] = TABLE_TASKS,
    *,
    baseline: float = DEFAULT_BASELINE,
    confidence: float = 0.95,
    power: float = DEFAULT_POWER,
) -> str:
    """The markdown table of ``docs/statistics.md``: for each k (rows) and number of tasks
    (columns), the smallest drop on every task that compare calls a regression with chance
    ``power``. The whole-run test comes first in compare's procedure, so it is at ``alpha``."""
    alpha = 1.0 - confidence
    head = "| k \\ tasks | " + " | ".join(str(t) for t in task_counts) + " |"
    rule = "| --- |" + " --- |" * len(task_counts)
    rows = [head, rule]
    for k in ks:
        cells = []
        for tasks in task_counts:
            drop = overall_detectable_drop(tasks, k, k, alpha, baseline=baseline, power=power)
            cells.append("none" if drop is None else f"{round(drop * 100)} pts")
        rows.append(f"| {k} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def power_table(
    ks: tuple[int, ...] = POWER_KS,
    task_counts: tuple[int, ...] = TABLE_TASKS,
    *,
    before: float = POWER_BEFORE,
    after: float = POWER_AFTER,
    confidence: float = 0.95,
) -> str:
    """The markdown table of ``docs/statistics.md``: for each k (rows) and number of tasks
    (columns), the chance that compare calls the run regressed when every task drops from
    ``before`` to ``after`` (the whole-run test at ``alpha``; exact for one task)."""
    alpha = 1.0 - confidence
    head = "| k \\ tasks | " + " | ".join(str(t) for t in task_counts) + " |"
    rule = "| --- |" + " --- |" * len(task_counts)
    rows = [head, rule]
    for k in ks:
        cells = [
            f"{overall_power(tasks, k, k, before, after, alpha) * 100:.0f}%"
            for tasks in task_counts
        ]
        rows.append(f"| {k} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


if __name__ == "__main__":  # python -m caliper.results.power: the tables of docs/statistics.md
    print(detectable_drop_table())
    print()
    print(f"Power for a drop from {POWER_BEFORE:.0%} to {POWER_AFTER:.0%} on every task:")
    print()
    print(power_table())
