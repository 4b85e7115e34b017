"""Sequential tools for a pass rate, for ``caliper run --k auto``.

``--k auto`` stops each task with the truncated sequential probability ratio test of
:func:`design` (at the end of this module): straight-line boundaries whose levels are
computed exactly, by dynamic programming over the binomial paths, for the run's ``--max-k``.
The confidence sequence below gives the interval shown and ``--precision``; the one-sided
mixture tests (:func:`bar_decision`) judge runs saved before ``--margin`` existed.

Adaptive k looks at a task's interval after every attempt and stops once it is decided. A
fixed-n interval (Wilson, Clopper–Pearson) is not valid under that kind of monitoring: looking
after every attempt and stopping the first time it clears a bar makes a wrong decision far more
often than 1 − confidence. This module uses a **confidence sequence**, a sequence of intervals
that holds at every n at once, so any stopping rule keeps its error rate.

The method is Robbins' mixture martingale with a Beta(a, b) mixing distribution (the
"beta-binomial mixture" confidence sequence). For a true pass rate p, after n usable attempts
with s passes

    M_n(p) = [B(a + s, b + n − s) / B(a, b)] / [p^s (1 − p)^(n − s)]

is a non-negative martingale with M_0 = 1 under p, so by Ville's inequality
P(∃ n: M_n(p) ≥ 1/α) ≤ α. The confidence sequence is C_n = {p : M_n(p) < 1/α}; it is an
interval (the log-likelihood is concave in p) found by bisection on each side of s/n. With
a = b = 1 (no prior preference), after n passes in n attempts the lower end solves
(n + 1) p^n = α: 95 % needs 8 straight passes to put a bar of 50 % below the interval.

Deciding a bar b uses two **one-sided** mixture tests, which need far fewer attempts than
waiting for the two-sided interval to clear b. Evidence that p > b is

    U_n(b) = mean over q_j in (b, 1) of  Π (q_j / b)^x (1 − q_j / 1 − b)^(1 − x)

(a finite, equal-weight mixture over a grid of alternatives above b). Each factor has
expectation p q/b + (1 − p)(1 − q)/(1 − b) ≤ 1 whenever p ≤ b < q, so U_n is a non-negative
supermartingale under every p ≤ b and Ville's inequality gives P(∃ n: U_n ≥ 1/α) ≤ α: the
bar is **met** once U_n ≥ 1/α. Mirror-wise, D_n(b) over q_j in (0, b) **fails** it. A wrong
"met" can only happen when p < b, where only U matters, and a wrong "failed" only when
p ≥ b, where only D matters, so each test runs at the full α. This is a mixture sequential
probability ratio test; it is valid under looking after every attempt and stopping at will.

Pure functions, no I/O. See ``docs/statistics.md``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

from caliper.system import attrs_classes

PRIOR_A = 1.0
PRIOR_B = 1.0
_BISECTIONS = 60


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


def log_mixture(successes: int, n: int, p: float, a: float = PRIOR_A, b: float = PRIOR_B) -> float:
    """``log M_n(p)``: the mixture martingale's value at ``p`` after ``successes`` in ``n``."""
    failures = n - successes
    log_marginal = _log_beta(a + successes, b + failures) - _log_beta(a, b)
    if p <= 0.0:
        return math.inf if successes else log_marginal
    if p >= 1.0:
        return math.inf if failures else log_marginal
    return log_marginal - (successes * math.log(p) + failures * math.log1p(-p))


@attrs_classes.frozen
class SequenceInterval:
    """The confidence sequence's interval after ``n`` usable attempts (fractions)."""

    low: float
    high: float
    n: int
    successes: int

    @property
    def width(self) -> float:
        """``high − low``."""
        return self.high - self.low


def confidence_sequence(
    successes: int, n: int, confidence: float, a: float = PRIOR_A, b: float = PRIOR_B
) -> SequenceInterval:
    """The interval ``{p : M_n(p) < 1/α}`` with ``α = 1 − confidence``, valid at every n."""
    if n <= 0:
        return SequenceInterval(0.0, 1.0, 0, 0)
    if not 0 <= successes <= n:
        raise ValueError("successes must lie between 0 and n")
    threshold = -math.log(1.0 - confidence)  # log(1/α)
    centre = successes / n

    def inside(p: float) -> bool:
        return log_mixture(successes, n, p, a, b) < threshold

    def edge(outside: float, inner: float) -> float:
        if inside(outside):
            return outside
        lo, hi = outside, inner
        for _ in range(_BISECTIONS):
            mid = (lo + hi) / 2
            if inside(mid):
                hi = mid
            else:
                lo = mid
        return hi

    # s/n is always inside: the mixture (an average of likelihoods) is at most the maximum
    # likelihood, so M_n(s/n) ≤ 1 < 1/α
    return SequenceInterval(edge(0.0, centre), edge(1.0, centre), n, successes)


GRID = 64
"""Alternatives in each one-sided mixture (equal weights; validity does not depend on it)."""


def log_one_sided(successes: int, n: int, bar: float, above: bool) -> float:
    """``log U_n(bar)`` (``above``) or ``log D_n(bar)``: the one-sided mixture evidence that
    the pass rate is above (below) ``bar`` after ``successes`` passes in ``n``."""
    failures = n - successes
    if not 0.0 < bar < 1.0:
        return -math.inf
    lo, hi = (bar, 1.0) if above else (0.0, bar)
    terms = []
    for j in range(GRID):
        q = lo + (hi - lo) * (j + 0.5) / GRID
        terms.append(successes * math.log(q / bar) + failures * math.log((1 - q) / (1 - bar)))
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms) / GRID)


def bar_decision(successes: int, n: int, bar: float, confidence: float) -> str | None:
    """``"met"``, ``"failed"`` or ``None`` (undecided) for a bar on the pass rate, by the
    one-sided mixture tests above at level ``1 − confidence``."""
    if bar <= 0.0:
        return "met"
    if n <= 0:
        return None
    threshold = -math.log(1.0 - confidence)
    if log_one_sided(successes, n, bar, above=True) >= threshold:
        return "met"
    if log_one_sided(successes, n, bar, above=False) >= threshold:
        return "failed"
    return None


# --- the truncated sequential probability ratio test that ``--k auto`` stops with ---------

DEFAULT_MARGIN = 0.1
"""``--margin``: the width of the indifference zone above a bar."""
DESIGN_SHARE = 0.7
"""The met line is the ratio test of the bar ``b`` against ``b + 0.7 (1 − b)``."""
EXACT_UP_TO = 200
"""Boundaries for at most this many attempts are tightened by exact computation; beyond it
the ratio tests keep Ville's threshold ``1/α`` (valid at any horizon)."""
_SEARCH_STEPS = 30
_ROUNDS = 4


def effective_margin(bar: float, margin: float) -> float:
    """The margin actually used: at most half the distance from the bar to 100 %."""
    return min(margin, (1.0 - bar) / 2.0)


@attrs_classes.frozen
class SequentialDesign:
    """Stopping boundaries for one bar: after ``n`` usable attempts with ``s`` passes the bar
    is **met** when ``s >= met_at[n]`` and **failed** when ``s <= fail_at[n]`` (``-1`` and
    ``n + 1`` mean never at that ``n``); no decision before ``min_n`` or after ``max_n``.

    Met line: the log-likelihood ratio of the bar ``b`` against ``q = b + 0.7 (1 − b)`` is at
    least ``met_level``. Failed line: the log-likelihood ratio of ``b + margin`` against
    ``b`` is at least ``fail_level``. Each level starts at Ville's ``log(1/α)``, which holds
    at any horizon (the ratio of a fixed alternative is a non-negative supermartingale under
    every rate on the null side), and is then lowered, by exact dynamic programming over the
    binomial paths up to ``max_n``, to the smallest level whose wrong-decision chance at the
    null's edge is still at most ``α``: ``P(met | p = b) ≤ alpha_met`` and
    ``P(failed | p = b + margin) ≤ alpha_fail``. Both chances are monotone in the true rate
    (raising it can only move a path up), so the first bounds wrong "met" for every
    ``p ≤ b`` and the second wrong "failed" for every ``p ≥ b + margin``.
    """

    bar: float
    margin: float
    max_n: int
    min_n: int
    alpha_met: float
    alpha_fail: float
    met_level: float
    fail_level: float
    met_at: tuple[int, ...]
    fail_at: tuple[int, ...]

    def decide(self, successes: int, n: int) -> str | None:
        """``"met"``, ``"failed"`` or ``None`` after ``successes`` passes in ``n``."""
        if n < max(self.min_n, 1) or n > self.max_n:
            return None
        if successes >= self.met_at[n]:
            return "met"
        if successes <= self.fail_at[n]:
            return "failed"
        return None

    def can_meet(self, successes: int, n: int) -> bool:
        """Whether ``met`` is still reachable within ``max_n`` from here."""
        return any(
            successes + (m - n) >= self.met_at[m]
            for m in range(max(n + 1, self.min_n, 1), self.max_n + 1)
        )

    def can_fail(self, successes: int, n: int) -> bool:
        """Whether ``failed`` is still reachable within ``max_n`` from here."""
        return any(
            successes <= self.fail_at[m] for m in range(max(n + 1, self.min_n, 1), self.max_n + 1)
        )


def _lines(
    bar: float, margin: float, max_n: int, min_n: int, met_level: float, fail_level: float
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``met_at`` and ``fail_at`` for the given levels (see :class:`SequentialDesign`)."""
    q = bar + DESIGN_SHARE * (1.0 - bar)
    r = bar + margin
    up_m, down_m = math.log(q / bar), math.log((1 - q) / (1 - bar))
    up_f, down_f = math.log(r / bar), math.log((1 - r) / (1 - bar))
    met_at, fail_at = [0], [-1]
    for n in range(1, max_n + 1):
        if n < min_n:
            met_at.append(n + 1)
            fail_at.append(-1)
            continue
        # s·up + (n − s)·down ≥ level  ⇔  s ≥ (level − n·down) / (up − down)
        met = math.ceil((met_level - n * down_m) / (up_m - down_m) - 1e-9)
        met_at.append(min(max(met, 0), n + 1))
        # the evidence for b over r is −(s·up_f + (n − s)·down_f) ≥ level
        fail = math.floor((-fail_level - n * down_f) / (up_f - down_f) + 1e-9)
        fail_at.append(max(min(fail, n), -1))
    return tuple(met_at), tuple(fail_at)


def decision_chances(
    p: float, met_at: Sequence[int], fail_at: Sequence[int]
) -> tuple[float, float]:
    """``P(met)`` and ``P(failed)`` at true rate ``p`` for the boundaries, by dynamic
    programming over the number of passes of the paths still undecided."""
    alive = [1.0]  # alive[s]: chance of s passes after n attempts and no decision yet
    lo, hi = 0, 0  # the passes that may still be undecided lie in [lo, hi]
    met = failed = 0.0
    for n in range(1, len(met_at)):
        step = [0.0] * (n + 1)
        for s in range(lo, hi + 1):
            weight = alive[s]
            if weight:
                step[s] += weight * (1.0 - p)
                step[s + 1] += weight * p
        hi += 1
        top = met_at[n]
        while hi >= lo and hi >= top:
            met += step[hi]
            step[hi] = 0.0
            hi -= 1
        bottom = fail_at[n]
        while lo <= hi and lo <= bottom:
            failed += step[lo]
            step[lo] = 0.0
            lo += 1
        alive = step
        if lo > hi:
            break
    return met, failed


def _lowest(level: float, chance: Callable[[float], float], alpha: float, floor: float) -> float:
    """The lowest level in ``[floor, level]`` (to the search's resolution) whose ``chance``
    is at most ``alpha``; ``chance`` grows as the level falls."""
    if chance(floor) <= alpha:
        return floor
    lo, hi = floor, level
    for _ in range(_SEARCH_STEPS):
        mid = (lo + hi) / 2
        if chance(mid) <= alpha:
            hi = mid
        else:
            lo = mid
    return hi


def design(
    bar: float, margin: float, max_n: int, min_n: int, alpha_met: float, alpha_fail: float
) -> SequentialDesign:
    """The boundaries for ``bar`` (see :class:`SequentialDesign`), computed once per setting
    (``bar``, ``margin`` and the ``α``s rounded so that equal settings share them)."""
    return _design(
        round(bar, 12), round(margin, 12), max_n, min_n, round(alpha_met, 15), round(alpha_fail, 15)
    )


def _met_chance(
    bar: float, margin: float, max_n: int, min_n: int, fail_level: float, met_level: float
) -> float:
    return decision_chances(bar, *_lines(bar, margin, max_n, min_n, met_level, fail_level))[0]


def _fail_chance(
    bar: float, margin: float, max_n: int, min_n: int, met_level: float, fail_level: float
) -> float:
    lines = _lines(bar, margin, max_n, min_n, met_level, fail_level)
    return decision_chances(bar + margin, *lines)[1]


@functools.lru_cache(maxsize=256)
def _design(
    bar: float, margin: float, max_n: int, min_n: int, alpha_met: float, alpha_fail: float
) -> SequentialDesign:
    """The boundaries for ``bar`` (see :class:`SequentialDesign`).

    The two levels are lowered in turn; each step keeps both error chances within their
    ``α`` (lowering one line only takes paths away from the other decision), so the result
    is valid after any number of rounds."""
    margin = effective_margin(bar, margin)
    met_level, fail_level = -math.log(alpha_met), -math.log(alpha_fail)
    if bar >= 1.0:  # never met; any failure shows the rate is below 100 %
        never = tuple(n + 1 for n in range(max_n + 1))
        below = tuple(-1 if n < max(min_n, 1) else n - 1 for n in range(max_n + 1))
        return SequentialDesign(
            bar, 0.0, max_n, min_n, alpha_met, alpha_fail, math.inf, fail_level, never, below
        )
    if max_n <= EXACT_UP_TO and margin > 0:
        for _ in range(_ROUNDS):
            before = (met_level, fail_level)
            met_level = _lowest(
                met_level,
                functools.partial(_met_chance, bar, margin, max_n, min_n, fail_level),
                alpha_met,
                0.0,
            )
            fail_level = _lowest(
                fail_level,
                functools.partial(_fail_chance, bar, margin, max_n, min_n, met_level),
                alpha_fail,
                0.0,
            )
            if (met_level, fail_level) == before:
                break
    met_at, fail_at = _lines(bar, margin, max_n, min_n, met_level, fail_level)
    return SequentialDesign(
        bar, margin, max_n, min_n, alpha_met, alpha_fail, met_level, fail_level, met_at, fail_at
    )


@attrs_classes.frozen
class DifferenceBounds:
    """The anytime-valid interval of a task's lift ``full − control`` and how it was made."""

    low: float
    high: float
    level: float
    """The level of each arm's confidence sequence (``1 − α / (2T)``)."""

    @property
    def width(self) -> float:
        """``high − low``."""
        return self.high - self.low


def difference_bounds(
    control: tuple[int, int], full: tuple[int, int], confidence: float, tasks: int
) -> DifferenceBounds:
    """The anytime-valid interval of ``full − control`` from each arm's ``(successes,
    usable)``: each arm's confidence sequence at ``1 − α / (2·tasks)``, combined (by the
    union bound, both arms' sequences hold at every n with chance ≥ ``1 − α / tasks``, and
    then so does the difference interval)."""
    alpha = 1.0 - confidence
    level = 1.0 - alpha / (2 * max(tasks, 1))
    c = confidence_sequence(control[0], control[1], level)
    f = confidence_sequence(full[0], full[1], level)
    return DifferenceBounds(low=f.low - c.high, high=f.high - c.low, level=level)
