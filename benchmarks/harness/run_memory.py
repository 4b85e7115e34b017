"""A large run at several workers: peak memory, wall and CPU, A/B against the predecessor.

Run from the repository root::

    .venv/bin/python benchmarks/harness/run_memory.py           # 5,000 attempts, 4 workers
    .venv/bin/python benchmarks/harness/run_memory.py --only activates --pairs 3
    .venv/bin/python benchmarks/harness/run_memory.py --base OTHER/.venv/bin/caliper
    .venv/bin/python benchmarks/harness/run_memory.py --smoke              # a quick check

The same workspace and fake ``claude`` as ``bench.py``. Each scenario is one ``caliper run``
of ``tasks × k`` attempts (activates-only, or expect-only whose judge is the fake CLI too) at
``--workers``; the two sides alternate (A/B, B/A, …). Every measurement is a whole process
under GNU ``/usr/bin/time``: wall seconds, CPU seconds (user + sys of the process and its
waited-for children: the process tree) and peak RSS (the largest single process of the tree,
which is the harness: the fake agent is a small ``/bin/sh``). The *empty* row is a run of one
attempt: the interpreter, the imports and the run's fixed set-up, which every peak includes.
Ratios are ``ours / other`` pair by pair, printed as ``median (min–max)``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench import OURS, TIME, Workspace, _alternate, predecessor, spread

SCENARIOS = {
    # name: (check, tasks, k)
    "empty": ("activates", 1, 1),
    "activates": ("activates", 500, 10),
    "expect": ("expect", 500, 10),
}


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    """(wall s, user+sys CPU s of the process tree, peak RSS KiB) of one whole process."""
    import subprocess

    with tempfile.NamedTemporaryFile("r", suffix=".time") as stats:
        started = time.perf_counter()
        done = subprocess.run(
            [TIME, "-f", "%U %S %M", "-o", stats.name, *argv],
            env=env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        wall = time.perf_counter() - started
        user, system, rss = Path(stats.name).read_text().split()[-3:]
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, float(user) + float(system), int(rss)


def main() -> int:
    """Run the chosen scenarios on both sides and print one Markdown row each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="the other side's caliper (default: 0.21.0)")
    parser.add_argument("--ours", type=Path, default=OURS, help="our caliper")
    parser.add_argument("--only", default="empty,activates,expect", help="scenarios")
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, once, one side")
    args = parser.parse_args()
    other = None if args.smoke else (args.base or predecessor())
    pairs = 1 if args.smoke else args.pairs
    with tempfile.TemporaryDirectory(prefix="caliper-runmem-") as temp:
        space = Workspace(Path(temp))
        env, cwd = space.env(), space.root
        print(
            "| scenario | attempts | ours wall s | other wall s | ours CPU s | other CPU s | "
            "ours peak MiB | other peak MiB | wall ratio | CPU ratio | peak RSS ratio |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for name in args.only.split(","):
            check, tasks, k = SCENARIOS[name]
            if args.smoke:
                tasks, k = min(tasks, 2), min(k, 2)
            ours_spec, pred_spec = space.specs(name, tasks, check)
            spec_of = {args.ours: ours_spec}
            if other is not None:
                spec_of[other] = ours_spec if args.base else pred_spec

            def side(
                exe: Path, name: str = name, spec_of: dict = spec_of, k: int = k
            ) -> tuple[float, float, int]:
                out = space.root / f"{name}.json"
                argv = [str(exe), "run", str(spec_of[exe]), "--k", str(k)]
                argv += ["--workers", str(args.workers), "--output", str(out)]
                return timed(argv, env, cwd)

            rows = _alternate(
                lambda: side(args.ours), (lambda: side(other)) if other else None, pairs
            )
            ours = [r[0] for r in rows]
            base = [r[1] for r in rows if r[1] is not None]
            cell = [
                spread([o[0] for o in ours]),
                spread([b[0] for b in base]),
                spread([o[1] for o in ours]),
                spread([b[1] for b in base]),
                spread([o[2] / 1024 for o in ours], "{:.0f}"),
                spread([b[2] / 1024 for b in base], "{:.0f}"),
            ]
            for i in range(3):
                cell.append(spread([a[i] / b[i] for a, b in rows if b is not None]))
            print(f"| {name} | {tasks * k} | " + " | ".join(cell) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
