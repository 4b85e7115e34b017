"""An anytime-valid confidence sequence for a pass rate, for ``caliper run --k auto``.

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

import math

import attrs

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


@attrs.frozen
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
