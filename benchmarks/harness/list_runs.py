"""``caliper list SPEC`` over a spec's saved runs, A/B against the predecessor.

Run from the repository root::

    .venv/bin/python benchmarks/harness/list_runs.py --totals 5000,50000 --pairs 5
    .venv/bin/python benchmarks/harness/list_runs.py --smoke     # tiny, no predecessor

Each harness makes one real run of the ``expect:`` + ``assert:`` tasks of ``shapes.py`` on the
fake ``claude`` (judge verdicts with usage, transcripts kept), saved where its ``list`` looks
(``.caliper/results/demo/`` of its own folder), then copied to 9 runs of the spec that
together hold about each total number of attempts (``bench.blow_up``). Ours reads the per-run
summaries its ``run`` writes beside each saved run: one untimed listing writes them for the
copies (which no ``run`` saved), and one untimed listing of the predecessor warms its file
cache alike. Then both sides list alternately; wall, CPU (user+sys) and peak RSS ratios
``ours / predecessor`` pair by pair, as ``median (min–max)``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench import OURS, Workspace, blow_up, predecessor, spread
from shapes import paired, spec_text

RUNS = 9
"""Runs per spec (``blow_up`` names copies by a day of January 2026, 1 to 9)."""


def saved_base(exe: Path, space: Workspace, side: str, tasks: int, k: int) -> Path:
    """One real run of ``exe`` saved in its own store under ``<side>/.caliper``, then moved
    out of the store to ``<side>-base.json`` (returned)."""
    folder = space.root / side
    store(folder).mkdir(parents=True)
    suffix = "" if side == "ours" else "/SKILL.md"
    text = spec_text(tasks, suffix).replace("./skills/", f"{space.root}/skills/")
    spec = folder / "demo.eval.yaml"
    spec.write_text(text)
    argv = [str(exe), "run", str(spec), "--k", str(k), "--workers", "2"]
    subprocess.run(argv, env=space.env(), cwd=folder, check=True, capture_output=True)
    (saved,) = store(folder).glob("*.json")
    return saved.rename(space.root / f"{side}-base.json")


def store(folder: Path) -> Path:
    """Where a harness run in ``folder`` saves the runs of the spec ``demo``."""
    return folder / ".caliper" / "results" / "demo"


def fill_store(base: Path, target: Path, factor: int, tasks_key: str, name_key: str) -> None:
    """Make ``target`` hold ``RUNS`` copies of ``base``, each grown ``factor``×, and nothing
    else."""
    for old in [*target.glob("*.json"), *target.glob(".*.summary")]:
        old.unlink()
    for number in range(RUNS):
        name = f"2026-01-0{number + 1}T00-00-00Z.json"
        blow_up(base, target / name, factor, tasks_key, name_key, number)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, once, no predecessor")
    parser.add_argument("--pairs", type=int, default=5, help="A/B pairs per row")
    parser.add_argument("--totals", default="5000,50000", help="attempts over all runs")
    args = parser.parse_args()
    pred_exe = None if args.smoke else predecessor()
    pairs = 1 if args.smoke else args.pairs
    tasks, k = (2, 2) if args.smoke else (50, 10)
    totals = [RUNS * tasks * k] if args.smoke else [int(s) for s in args.totals.split(",")]
    with tempfile.TemporaryDirectory(prefix="caliper-list-") as temp:
        space = Workspace(Path(temp))
        env = space.env()
        sides = {"ours": (OURS, "tasks", "name"), "pred": (pred_exe, "task_results", "task_name")}
        bases = {
            side: saved_base(exe, space, side, tasks, k)
            for side, (exe, _, _) in sides.items()
            if exe is not None
        }
        print(
            "| runs × attempts each | attempts | ours wall s | predecessor wall s | ours CPU s "
            "| predecessor CPU s | ours / predecessor, wall | ours / predecessor, CPU "
            "| ours / predecessor, peak RSS |\n" + "| --- " * 9 + "|",
            flush=True,
        )
        for total in totals:
            factor = max(1, round(total / RUNS / (tasks * k)))
            commands = {}
            for side, base in bases.items():
                exe, tasks_key, name_key = sides[side]
                fill_store(base, store(space.root / side), factor, tasks_key, name_key)
                commands[side] = [str(exe), "list", "demo"]
                warm = subprocess.run(
                    commands[side], env=env, cwd=space.root / side, capture_output=True
                )
                if warm.returncode != 0 or b"2026-01-09" not in warm.stdout:
                    raise SystemExit(f"{side}: list did not show the 9 runs:\n{warm.stderr!r}")
            cwd = space.root / "ours"
            pred = commands.get("pred")
            result = paired(
                ["env", f"--chdir={cwd}", *commands["ours"]],
                None if pred is None else ["env", f"--chdir={space.root / 'pred'}", *pred],
                env,
                space.root,
                pairs,
            )
            each = factor * tasks * k
            print(
                f"| {RUNS} × {each} | {RUNS * each} | {spread([r[0] for r in result['ours']])} | "
                f"{spread([r[0] for r in result['pred']])} | "
                f"{spread([r[1] for r in result['ours']])} | "
                f"{spread([r[1] for r in result['pred']])} | {spread(result.get('wall', []))} | "
                f"{spread(result.get('cpu', []))} | {spread(result.get('rss', []))} |",
                flush=True,
            )
    print(f"\n{pairs} A/B pairs a row; load average at the end {os.getloadavg()[0]:.1f}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
