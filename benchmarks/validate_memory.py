"""Peak memory and wall time of ``caliper validate`` on a spec with many skills.

    .venv/bin/python benchmarks/validate_memory.py [--skills 10765] [--rounds 3]
    .venv/bin/python benchmarks/validate_memory.py --skills 10765 --budget-mb 70

Writes a throw-away spec whose ``skills:`` lists ``--skills`` local skill folders (each a
``SKILL.md``, a reference file and a script, like a real collection), then runs the real
``caliper validate`` on it ``--rounds`` times in fresh processes and prints the median wall
time and the largest peak RSS (``ru_maxrss`` of the finished child). With ``--budget-mb`` it
exits 1 when the peak passes that many MiB (the loose guard a slow test uses).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CALIPER = Path(sys.executable).parent / "caliper"


def write_spec(root: Path, count: int) -> Path:
    """A spec with ``count`` three-file skills under ``root``; return its path."""
    lines = ["skills:"]
    for index in range(count):
        name = f"skill-{index:05d}"
        folder = root / "skills" / name
        (folder / "references").mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Does chore {index} when the user asks for "
            f"chore {index} by name.\n---\n# {name}\nSteps.\n"
        )
        (folder / "references" / "guide.md").write_text("A guide line.\n" * 20)
        (folder / "run.sh").write_text("#!/bin/sh\necho done\n")
        lines.append(f"  - ./skills/{name}")
    lines += ["tasks:", "  - name: t", "    prompt: do a chore", "    assert: assert True"]
    spec = root / "many.eval.yaml"
    spec.write_text("\n".join(lines) + "\n")
    return spec


def measure(spec: Path) -> tuple[float, float]:
    """One ``caliper validate`` in a fresh process: (wall seconds, peak RSS in MiB)."""
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child becomes caliper, so its own peak RSS is what wait4 reports
        with open(os.devnull, "wb") as sink:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
        os.execv(str(CALIPER), [str(CALIPER), "validate", str(spec)])
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        subprocess.run([str(CALIPER), "validate", str(spec)], check=False)
        raise SystemExit(f"caliper validate failed on {spec}")
    return wall, usage.ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skills", type=int, default=10765)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget-mb", type=float, default=None)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="caliper-validate-mem-") as temp:
        spec = write_spec(Path(temp), args.skills)
        results = [measure(spec) for _ in range(args.rounds)]
    walls = [wall for wall, _ in results]
    peak = max(rss for _, rss in results)
    print(
        f"validate, {args.skills} skills: wall {statistics.median(walls):.2f} s "
        f"(median of {args.rounds}), peak RSS {peak:.1f} MiB"
    )
    if args.budget_mb is not None and peak > args.budget_mb:
        print(f"peak RSS {peak:.1f} MiB is over the budget of {args.budget_mb:.0f} MiB")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
