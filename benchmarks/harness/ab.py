"""Ours against another checkout of ours (e.g. the base of a change), A/B paired.

    .venv/bin/python benchmarks/harness/ab.py --base /path/to/other/.venv/bin/caliper \
        --only activates,expect --pairs 5

The same workspace and fake ``claude`` as ``bench.py``; each pair runs both sides at k=2 and
at k=10 (alternating which goes first), so the per-run fixed cost cancels: the marginal cost
per extra attempt, and the harness work (that minus the fake agent's own starts, measured by
the same bare loop as ``bench.py``). Prints one Markdown row per scenario.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench import OURS, Workspace, agent_floor, marginal_pair, measure, spread

SCENARIOS = {
    # name: (check, tasks, k, workers, agent starts an attempt)
    "activates": ("activates", 100, 10, 1, 1),
    "activates-2": ("activates", 100, 10, 2, 1),
    "expect": ("expect", 10, 10, 1, 2),
    "assert": ("assert", 10, 10, 1, 1),
}


def main() -> int:
    """Run the chosen scenarios on both sides and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True, help="the other side's caliper")
    parser.add_argument("--only", default="activates,expect", help="scenarios, comma-separated")
    parser.add_argument("--pairs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="caliper-ab-") as temp:
        space = Workspace(Path(temp))
        env, cwd = space.env(), space.root
        floor_ms = agent_floor(space, env, 100)
        print(f"fake agent floor: {floor_ms:.2f} ms a start\n")
        print("| scenario | new ms/attempt | base ms/attempt | new harness ms | base harness ms |")
        print("| --- | --- | --- | --- | --- |")
        for name in args.only.split(","):
            check, tasks, k, workers, starts = SCENARIOS[name]
            spec, _ = space.specs(name, tasks, check)
            out = space.root / "out.json"

            def side(exe: Path, spec: Path = spec, workers: int = workers, out: Path = out):  # type: ignore[no-untyped-def]
                def run(kk: int) -> tuple[float, int]:
                    argv = [str(exe), "run", str(spec), "--k", str(kk), "--workers", str(workers)]
                    return measure([*argv, "--output", str(out)], env, cwd)

                return run

            result = marginal_pair(side(OURS), side(args.base), (2, k), args.pairs)
            extra = tasks * (k - 2)
            new = [e / extra * 1000 for e in result["ours_extra"]]
            base = [e / extra * 1000 for e in result["pred_extra"]]
            work = [v - floor_ms * starts for v in new] if workers == 1 else []
            base_work = [v - floor_ms * starts for v in base] if workers == 1 else []
            fmt = "{:.2f}"
            print(
                f"| {name} | {spread(new, fmt)} | {spread(base, fmt)} | "
                f"{spread(work, fmt)} | {spread(base_work, fmt)} |",
                flush=True,
            )
            if work:
                ratio = statistics.median(work) / statistics.median(base_work)
                print(f"|   harness work new/base (medians) | {ratio:.2f} | | | |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
