"""Benchmark: adaptive k (``--k auto --max-k N``) against a fixed ``--k N``.

A simulated agent passes each attempt with a known probability. For each (true rate, bar,
--max-k) scenario it runs many simulated tasks two ways:

* adaptive: the same stopping rule ``caliper run --k auto`` uses
  (:class:`caliper.runner.adaptive.AdaptiveK`, one attempt at a time, default
  ``--margin 0.1`` and ``--inconclusive fail``), which decides the bar with the truncated
  sequential probability ratio test of :func:`caliper.results.sequential.design`;
* fixed: N attempts, then the CI gate's rule for a task bar (exact Clopper–Pearson tails: met
  when the 95 % lower bound is at or above the bar, failed when the upper bound is below).

It reports the attempts spent, how often the bar ended met, and the wrong decisions: "met"
while the true rate is at or below the bar, "failed" while it is at or above bar + margin (in
between either decision is acceptable). Beside the simulation it gives the adaptive rule's
exact chance of "met" and expected attempts, by dynamic programming over every path of the
same stopping rule. Run with ``python3 -m uv run --frozen python benchmarks/adaptive_k.py
[--runs N] [--seed S]`` and ``--markdown`` to print the table committed in
``benchmarks/RESULTS-adaptive.md``.
"""

from __future__ import annotations

import argparse
import random
import time

from caliper.results.gate import BarVerdict, exact_verdict
from caliper.results.models import AttemptRecord, Outcome
from caliper.results.sequential import DEFAULT_MARGIN
from caliper.runner.adaptive import AdaptiveK, AdaptiveSettings, stop_reason

CONFIDENCE = 0.95
SCENARIOS = [  # (true pass rate, bar, --max-k, kind)
    (0.95, 0.50, 20, "far"),
    (0.90, 0.60, 20, "far"),
    (0.10, 0.50, 20, "far"),
    (0.30, 0.80, 20, "far"),
    (0.80, 0.70, 20, "near"),
    (0.60, 0.70, 20, "near"),
    (0.75, 0.80, 20, "near"),
    (0.95, 0.80, 20, "high bar"),
    (0.95, 0.80, 40, "high bar"),
    (0.90, 0.80, 40, "high bar"),
    (0.80, 0.80, 40, "at the bar"),
    (0.70, 0.80, 40, "below"),
    (0.99, 0.90, 40, "high bar"),
    (0.97, 0.90, 60, "high bar"),
    (0.90, 0.90, 60, "at the bar"),
]


def settings_for(bar: float, max_k: int) -> AdaptiveSettings:
    return AdaptiveSettings(max_k=max_k, confidence=CONFIDENCE, run_bar=bar)


def adaptive_task(p: float, bar: float, max_k: int, rng: random.Random) -> tuple[int, str | None]:
    """Attempts spent and decision (``met``/``failed``/``None``) of one adaptive task."""
    state = AdaptiveK(settings_for(bar, max_k), ["t"])
    spent = 0
    while state.next_jobs(1, lambda _name: False):
        spent += 1
        outcome = Outcome.PASS if rng.random() < p else Outcome.TASK_FAIL
        state.observe(AttemptRecord(task_name="t", attempt=spent, outcome=outcome))
    reason = state.reasons().get("t", "")
    decision = "met" if " met:" in reason else "failed" if " failed:" in reason else None
    return spent, decision


def fixed_task(p: float, bar: float, max_k: int, rng: random.Random) -> tuple[int, str | None]:
    """Attempts spent and decision of one fixed-k task (the gate's exact rule)."""
    passes = sum(rng.random() < p for _ in range(max_k))
    verdict = exact_verdict(bar, passes, max_k, CONFIDENCE)
    return max_k, {BarVerdict.MET: "met", BarVerdict.FAILED: "failed"}.get(verdict)


def exact_adaptive(p: float, bar: float, max_k: int) -> tuple[float, float]:
    """(P[met], E[attempts]) of the adaptive rule, exactly, over every path."""
    settings = settings_for(bar, max_k)
    alive = {0: 1.0}
    met = spent = 0.0
    for n in range(1, max_k + 1):
        grown: dict[int, float] = {}
        for s, mass in alive.items():
            grown[s + 1] = grown.get(s + 1, 0.0) + mass * p
            grown[s] = grown.get(s, 0.0) + mass * (1 - p)
        alive = {}
        for s, mass in grown.items():
            reason = stop_reason(settings, bar, s, n)
            if reason is None and n < max_k:
                alive[s] = mass
                continue
            spent += mass * n
            met += mass * (reason is not None and " met:" in reason)
    return met, spent


def summarise(runner, p: float, bar: float, max_k: int, runs: int, rng: random.Random) -> dict:
    spent = met = wrong = 0
    for _ in range(runs):
        attempts, decision = runner(p, bar, max_k, rng)
        spent += attempts
        met += decision == "met"
        wrong += (decision == "met" and p <= bar) or (
            decision == "failed" and p >= bar + DEFAULT_MARGIN
        )
    return {"attempts": spent / runs, "met": met / runs, "error": wrong / runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated tasks per scenario")
    parser.add_argument("--seed", type=int, default=20261202)
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.monotonic()
    rows = []
    for p, bar, max_k, kind in SCENARIOS:
        auto = summarise(adaptive_task, p, bar, max_k, args.runs, rng)
        fixed = summarise(fixed_task, p, bar, max_k, args.runs, rng)
        exact = exact_adaptive(p, bar, max_k)
        rows.append((p, bar, max_k, kind, auto, fixed, exact))
    worst = max(r[4]["error"] for r in rows)
    header = (
        "| true rate | bar | --max-k | kind | attempts auto (exact) | attempts fixed "
        "| auto/fixed | met auto (exact) | met fixed | wrong auto | wrong fixed |"
    )
    lines = [header, "|" + " --- |" * 11]
    for p, bar, max_k, kind, auto, fixed, (exact_met, exact_spent) in rows:
        lines.append(
            f"| {p:.2f} | {bar:.2f} | {max_k} | {kind} | {auto['attempts']:.1f} "
            f"({exact_spent:.1f}) | {fixed['attempts']:.0f} "
            f"| {auto['attempts'] / fixed['attempts']:.0%} | {auto['met']:.1%} "
            f"({exact_met:.1%}) | {fixed['met']:.1%} | {auto['error']:.2%} "
            f"| {fixed['error']:.2%} |"
        )
    summary = (
        f"Worst adaptive wrong-decision rate {worst:.2%} (nominal level "
        f"{1 - CONFIDENCE:.0%} per side). {args.runs} simulated tasks per scenario, "
        f"seed {args.seed}, {time.monotonic() - started:.0f} s."
    )
    print("\n".join(lines))
    print()
    print(summary)


if __name__ == "__main__":
    main()
