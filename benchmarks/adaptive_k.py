"""Benchmark: adaptive k (``--k auto --max-k 20``) against a fixed ``--k 20``.

A simulated agent passes each attempt with a known probability. For each (true rate, bar)
scenario it runs many simulated tasks two ways:

* adaptive: the same stopping rule ``caliper run --k auto`` uses
  (:class:`caliper.runner.adaptive.AdaptiveK`, one attempt at a time), which decides the bar
  on an anytime-valid confidence sequence;
* fixed: 20 attempts, then the CI gate's rule on the 95 % Wilson interval (met when its lower
  bound is at or above the bar, failed when its upper bound is below, else inconclusive).

It reports the attempts spent, how often each way decided, and the decision error rate (met
while the true rate is below the bar, or failed while it is at or above). Run with
``python3 -m uv run --frozen python benchmarks/adaptive_k.py [--runs N] [--seed S]`` and
``--markdown`` to print the table committed in ``benchmarks/RESULTS-adaptive.md``.
"""

from __future__ import annotations

import argparse
import random
import time

from caliper.results.models import AttemptRecord, Outcome
from caliper.results.stats import wilson_interval
from caliper.runner.adaptive import AdaptiveK, AdaptiveSettings

MAX_K = 20
CONFIDENCE = 0.95
SCENARIOS = [  # (true pass rate, bar, "far"/"near")
    (0.95, 0.50, "far"),
    (0.90, 0.60, "far"),
    (0.10, 0.50, "far"),
    (0.30, 0.80, "far"),
    (0.80, 0.70, "near"),
    (0.60, 0.70, "near"),
    (0.75, 0.80, "near"),
]


def adaptive_task(p: float, bar: float, rng: random.Random) -> tuple[int, str | None]:
    """Attempts spent and decision (``met``/``failed``/``None``) of one adaptive task."""
    settings = AdaptiveSettings(max_k=MAX_K, confidence=CONFIDENCE, run_bar=bar)
    state = AdaptiveK(settings, ["t"])
    spent = 0
    while state.next_jobs(1, lambda _name: False):
        spent += 1
        outcome = Outcome.PASS if rng.random() < p else Outcome.TASK_FAIL
        state.observe(AttemptRecord(task_name="t", attempt=spent, outcome=outcome))
    reason = state.reasons().get("t", "")
    decision = "met" if " met" in reason else "failed" if " failed" in reason else None
    return spent, decision


def fixed_task(p: float, bar: float, rng: random.Random) -> tuple[int, str | None]:
    """Attempts spent and decision of one fixed-k task (the gate's rule on Wilson)."""
    passes = sum(rng.random() < p for _ in range(MAX_K))
    interval = wilson_interval(passes, MAX_K, CONFIDENCE)
    assert interval is not None
    if interval.low >= bar:
        return MAX_K, "met"
    if interval.high < bar:
        return MAX_K, "failed"
    return MAX_K, None


def summarise(runner, p: float, bar: float, runs: int, rng: random.Random) -> dict:
    spent = decided = wrong = 0
    truth = "met" if p >= bar else "failed"
    for _ in range(runs):
        attempts, decision = runner(p, bar, rng)
        spent += attempts
        if decision is not None:
            decided += 1
            wrong += decision != truth
    return {"attempts": spent / runs, "decided": decided / runs, "error": wrong / runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="simulated tasks per scenario")
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    started = time.monotonic()
    rows = []
    for p, bar, kind in SCENARIOS:
        auto = summarise(adaptive_task, p, bar, args.runs, rng)
        fixed = summarise(fixed_task, p, bar, args.runs, rng)
        rows.append((p, bar, kind, auto, fixed))
    total_auto = sum(r[3]["attempts"] for r in rows)
    total_fixed = sum(r[4]["attempts"] for r in rows)
    worst = max(r[3]["error"] for r in rows)
    far = [r for r in rows if r[2] == "far"]
    far_share = sum(r[3]["attempts"] for r in far) / sum(r[4]["attempts"] for r in far)
    header = (
        "| true rate | bar | kind | attempts auto | attempts fixed | auto/fixed | decided auto "
        "| decided fixed | error auto | error fixed |"
    )
    lines = [header, "|" + " --- |" * 10]
    for p, bar, kind, auto, fixed in rows:
        lines.append(
            f"| {p:.2f} | {bar:.2f} | {kind} | {auto['attempts']:.1f} | {fixed['attempts']:.1f} "
            f"| {auto['attempts'] / fixed['attempts']:.0%} | {auto['decided']:.1%} "
            f"| {fixed['decided']:.1%} | {auto['error']:.2%} | {fixed['error']:.2%} |"
        )
    summary = (
        f"All scenarios: adaptive spent {total_auto / total_fixed:.0%} of the fixed run's "
        f"attempts ({far_share:.0%} on the far bars); worst adaptive error rate {worst:.2%} "
        f"(nominal level {1 - CONFIDENCE:.0%}). {args.runs} simulated tasks per scenario, "
        f"seed {args.seed}, {time.monotonic() - started:.0f} s."
    )
    if args.markdown:
        print("\n".join(lines))
        print()
        print(summary)
    else:
        print("\n".join(lines))
        print(summary)


if __name__ == "__main__":
    main()
