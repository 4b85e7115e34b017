"""Caliper's harness cost, A/B against its predecessor (``caliper-eval==0.21.0`` from PyPI).

Run from the repository root::

    .venv/bin/python benchmarks/harness/bench.py            # the full table (tens of minutes)
    .venv/bin/python benchmarks/harness/bench.py --smoke    # a reduced run that checks it works

Both harnesses run the same ``/bin/sh`` fake ``claude`` (``fakes.py``) from a throw-away
workspace; every measurement is a whole ``caliper`` process (wall time and peak RSS from
``/usr/bin/time``), the two sides alternating (A/B, B/A, …) so drift hits both alike. The
predecessor is installed into a throw-away venv under /tmp. ``--smoke`` skips it (and the
timings are meaningless there): it only runs every scenario once at a tiny size.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).parent))
from fakes import write_fake_claude

ROOT = Path(__file__).resolve().parents[2]
OURS = ROOT / ".venv" / "bin" / "caliper"
PREDECESSOR = "caliper-eval==0.21.0"
PRED_VENV = Path(tempfile.gettempdir()) / "caliper-bench-predecessor"
TIME = "/usr/bin/time"
T = TypeVar("T")


# -- the workspace ----------------------------------------------------------------------------
class Workspace:
    """Skills, specs, the fake CLI and a HOME, all under one temporary folder."""

    def __init__(self, root: Path):
        self.root = root
        self.home = root / "home"
        self.home.mkdir()
        for name, text in (("shout", "Greets loudly."), ("whisper", "Says good night softly.")):
            folder = root / "skills" / name
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(
                f"---\nname: {name}\ndescription: {text} Use when asked.\n---\nDo it.\n"
            )
        self.bin = write_fake_claude(root / "fake")
        subprocess.run(["git", "init", "-q", str(root)], check=True)

    def env(self, **extra: str) -> dict[str, str]:
        """PATH with the fake ``claude`` first, the throw-away HOME, no cache from elsewhere."""
        env = {
            "PATH": f"{self.bin}{os.pathsep}{os.environ.get('PATH', os.defpath)}",
            "HOME": str(self.home),
            "LC_ALL": "C.UTF-8",
            "CALIPER_CACHE_DIR": str(self.root / "cache"),
            "TMPDIR": os.environ.get("TMPDIR", tempfile.gettempdir()),
        }
        env.update(extra)
        return env

    def specs(self, name: str, tasks: int, check: str) -> tuple[Path, Path]:
        """One spec per harness (ours names skill folders, the predecessor SKILL.md files)."""
        body = {
            "assert": (
                "    assert: |\n      from pathlib import Path\n"
                '      assert Path("greeting.txt").exists()\n'
            ),
            "expect": "    expect: The agent greeted the team loudly.\n",
            "activates": "    activates: [shout]\n",
        }[check]
        tasks_text = "".join(
            f"  - name: task {i:05d}\n    prompt: Please greet the team ({i}).\n{body}"
            for i in range(tasks)
        )
        out = []
        for side, suffix in (("ours", ""), ("pred", "/SKILL.md")):
            spec = self.root / f"{name}-{side}.eval.yaml"
            spec.write_text(
                f"skills:\n  - ./skills/shout{suffix}\n  - ./skills/whisper{suffix}\n"
                f"tasks:\n{tasks_text}"
            )
            out.append(spec)
        return out[0], out[1]


# -- measuring --------------------------------------------------------------------------------
def measure(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, int]:
    """(wall seconds, peak RSS in KiB) of one whole process; fails loudly if it fails."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as stats:
        started = time.perf_counter()
        done = subprocess.run(
            [TIME, "-f", "%M", "-o", stats.name, *argv],
            env=env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        wall = time.perf_counter() - started
        rss = int(Path(stats.name).read_text().split()[-1])
    if done.returncode not in (0,):
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, rss


def _alternate(
    ours: Callable[[], T], pred: Callable[[], T] | None, pairs: int
) -> list[tuple[T, T | None]]:
    """``pairs`` A/B measurements, the order alternating (ours first, then the predecessor
    first, ...), so that a machine slowing down or speeding up weighs on both sides alike."""
    rows: list[tuple[T, T | None]] = []
    for i in range(pairs):
        if pred is None:
            rows.append((ours(), None))
        elif i % 2 == 0:
            a = ours()
            rows.append((a, pred()))
        else:
            b = pred()
            rows.append((ours(), b))
    return rows


def pair(
    ours: Callable[[], tuple[float, int]],
    pred: Callable[[], tuple[float, int]] | None,
    pairs: int,
) -> dict:
    """``pairs`` A/B measurements (order alternating); ratios ours/predecessor per pair."""
    rows = _alternate(ours, pred, pairs)
    result = {"ours": [r[0] for r in rows], "pred": [r[1] for r in rows if r[1]]}
    if pred is not None:
        result["time_ratio"] = [a[0] / b[0] for a, b in rows]
        result["rss_ratio"] = [a[1] / b[1] for a, b in rows]
    return result


def marginal_pair(
    ours: Callable[[int], tuple[float, int]],
    pred: Callable[[int], tuple[float, int]] | None,
    sizes: tuple[int, int],
    pairs: int,
    floor: Callable[[], float] | None = None,
) -> dict:
    """Like :func:`pair`, but each side runs at two sizes (``k`` small, then ``k`` large) in
    every pair, so the per-run fixed cost (start-up, pre-flight, saving) cancels out:
    ``marginal`` is (wall at the large size − wall at the small one) per extra attempt, in
    seconds. ``ours``/``pred`` take ``k``; ``sizes`` are the two attempt counts. ``floor``
    (the fake agent's own cost a start, in ms) is measured in every pair, right after our
    side, so each pair's harness work subtracts the floor of its own moment (``floor_ms``)."""
    small_k, large_k = sizes

    def both(side: Callable[[int], tuple[float, int]]) -> tuple[tuple[float, int], float]:
        small, _ = side(small_k)
        large = side(large_k)
        return large, large[0] - small

    floors: list[float] = []

    def ours_side() -> tuple[tuple[float, int], float]:
        out = both(ours)
        if floor is not None:  # once per pair, right after our side
            floors.append(floor())
        return out

    rows = _alternate(ours_side, (lambda: both(pred)) if pred is not None else None, pairs)
    result = {
        "floor_ms": floors,
        "ours": [r[0][0] for r in rows],
        "pred": [r[1][0] for r in rows if r[1]],
        "ours_extra": [r[0][1] for r in rows],
        "pred_extra": [r[1][1] for r in rows if r[1]],
    }
    if pred is not None:
        result["time_ratio"] = [a[0][0] / b[0][0] for a, b in rows]
        result["rss_ratio"] = [a[0][1] / b[0][1] for a, b in rows]
        result["marginal_ratio"] = [a[1] / b[1] for a, b in rows if b[1] > 0]
    return result


def spread(values: list[float], fmt: str = "{:.2f}") -> str:
    """``median (min–max)``."""
    if not values:
        return "—"
    med = statistics.median(values)
    return f"{fmt.format(med)} ({fmt.format(min(values))}–{fmt.format(max(values))})"


# -- the predecessor --------------------------------------------------------------------------
def predecessor() -> Path:
    """``caliper`` of the predecessor, installed once into a throw-away venv."""
    exe = PRED_VENV / "bin" / "caliper"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", str(PRED_VENV)], check=True)
        subprocess.run([str(PRED_VENV / "bin" / "pip"), "install", "-q", PREDECESSOR], check=True)
    return exe


# -- result files of any size -----------------------------------------------------------------
def blow_up(
    source: Path, target: Path, factor: int, tasks_key: str, name_key: str, copy_no: int
) -> None:
    """Copy a saved run with every task repeated ``factor`` times (renamed) to ``target``;
    ``copy_no`` makes it another run (its id and time differ)."""
    data = json.loads(source.read_text())
    if "meta" in data:  # ours
        data["meta"]["run_id"] = f"2026-01-0{copy_no + 1}T00-00-00Z"
        data["meta"]["started_at"] = f"2026-01-0{copy_no + 1}T00:00:00+00:00"
    if "run" in data:  # the predecessor
        data["run"]["timestamp"] = f"2026-01-0{copy_no + 1}T00:00:00.000000Z"
    tasks = data[tasks_key]
    grown = []
    for n in range(factor):
        for task in tasks:
            copied = copy.deepcopy(task)
            copied[name_key] = f"{task[name_key]} #{n}"
            if "task_id" in copied:
                copied["task_id"] = f"{task['task_id']}-{n}"
            grown.append(copied)
    data[tasks_key] = grown
    target.write_text(json.dumps(data))


def agent_floor(space: Workspace, env: dict[str, str], calls: int) -> float:
    """What bounds per-attempt work in both harnesses: the fake agent started ``calls`` times
    by a bare loop, each in a fresh temporary folder (no harness at all), in ms per start."""
    argv = ["claude", "-p", "hi", "--dangerously-skip-permissions", "--output-format"]
    started = time.perf_counter()
    for _ in range(calls):
        folder = tempfile.mkdtemp(dir=space.root)
        subprocess.run([*argv, "stream-json"], cwd=folder, env=env, capture_output=True)
        shutil.rmtree(folder)
    return (time.perf_counter() - started) / calls * 1000


# -- the scenarios ----------------------------------------------------------------------------
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, once, no predecessor")
    parser.add_argument("--pairs", type=int, default=5, help="A/B pairs per comparison")
    parser.add_argument("--out", type=Path, help="also write the Markdown table here")
    parser.add_argument("--only", help="comma-separated scenario names to run")
    args = parser.parse_args()
    smoke = args.smoke
    pairs = 1 if smoke else args.pairs
    only = set(args.only.split(",")) if args.only else None
    pred_exe = None if smoke else predecessor()
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    with tempfile.TemporaryDirectory(prefix="caliper-bench-") as temp:
        space = Workspace(Path(temp))
        env = space.env()
        cwd = space.root

        def run_argv(exe: Path, spec: Path, k: int, workers: int, out: Path) -> list[str]:
            return [
                str(exe),
                "run",
                str(spec),
                "--k",
                str(k),
                "--workers",
                str(workers),
                "--output",
                str(out),
            ]

        say(f"## Ours vs the predecessor (wall time, median (min–max) over {pairs} A/B pairs)")
        say()
        say(
            "| work | attempts | ours s | predecessor s | ours / predecessor (time) | "
            "ours / predecessor (peak RSS) |"
        )
        say("| --- | --- | --- | --- | --- | --- |")

        def row(label: str, attempts: int, result: dict) -> None:
            ours_t = [t for t, _ in result["ours"]]
            pred_t = [t for t, _ in result["pred"]]
            say(
                f"| {label} | {attempts or '—'} | {spread(ours_t)} | {spread(pred_t)} | "
                f"{spread(result.get('time_ratio', []))} | "
                f"{spread(result.get('rss_ratio', []))} |"
            )

        floor_ms = agent_floor(space, env, 10 if smoke else 200)
        runs = [
            ("run, assert-only, 1 worker", "assert", 10, 10, 1),
            ("run, assert-only, 4 workers", "assert", 10, 10, 4),
            ("run, expect-only (judge = fake CLI), 1 worker", "expect", 10, 10, 1),
            ("run, activates-only, 1 worker", "activates", 100, 10, 1),
            ("run, activates-only, 2 workers", "activates", 500, 10, 2),
        ]
        per_attempt: list[tuple[str, int, dict, int, int]] = []
        small_k = 1 if smoke else 2
        for label, check, tasks, k, workers in runs:
            if smoke:
                tasks, k = 2, 2
            name = f"{check}-{tasks}-{workers}"
            if only and name not in only and check not in only:
                continue
            ours_spec, pred_spec = space.specs(name, tasks, check)
            out = space.root / "out.json"
            result = marginal_pair(
                lambda k, s=ours_spec, w=workers, o=out: measure(
                    run_argv(OURS, s, k, w, o), env, cwd
                ),
                None
                if pred_exe is None
                else (
                    lambda k, s=pred_spec, w=workers, o=out: measure(
                        run_argv(pred_exe, s, k, w, o), env, cwd
                    )
                ),
                (small_k, k),
                1 if tasks * k >= 5000 else pairs,
                (lambda: agent_floor(space, env, 10 if smoke else 100)) if workers == 1 else None,
            )
            row(label, tasks * k, result)
            starts = 2 if check == "expect" else 1  # fake CLI starts per attempt
            per_attempt.append((label, tasks * (k - small_k), result, starts, workers))

        # validate
        if not only or "validate" in only:
            ours_spec, pred_spec = space.specs("validate", 3, "assert")
            result = pair(
                lambda: measure([str(OURS), "validate", str(ours_spec)], env, cwd),
                None
                if pred_exe is None
                else (lambda: measure([str(pred_exe), "validate", str(pred_spec)], env, cwd)),
                pairs * 2,
            )
            row("validate, 3 tasks, 2 skills", 0, result)

        # report / compare at growing sizes, from one real 500-attempt run of each
        if not only or "report" in only:
            base_tasks, k = (2, 2) if smoke else (50, 10)
            ours_spec, pred_spec = space.specs("report", base_tasks, "activates")
            ours_base, pred_base = space.root / "ours-base.json", space.root / "pred-base.json"
            subprocess.run(
                run_argv(OURS, ours_spec, k, 2, ours_base),
                env=env,
                cwd=cwd,
                check=True,
                capture_output=True,
            )
            if pred_exe is not None:
                subprocess.run(
                    run_argv(pred_exe, pred_spec, k, 2, pred_base),
                    env=env,
                    cwd=cwd,
                    check=True,
                    capture_output=True,
                )
            for factor in (1, 10) if smoke else (1, 10, 100):
                attempts = base_tasks * k * factor
                files = {}
                for side, base, key, name_key in (
                    ("ours", ours_base, "tasks", "name"),
                    ("pred", pred_base, "task_results", "task_name"),
                ):
                    if side == "pred" and pred_exe is None:
                        continue
                    for number, copy_no in enumerate(("a", "b")):
                        target = space.root / f"{side}-{attempts}-{copy_no}.json"
                        blow_up(base, target, factor, key, name_key, number)
                        files[side, copy_no] = target
                for command in ("report", "compare"):

                    def argv(exe, side, command=command, files=files):
                        # the text report of each (what a user reads); compare of two runs
                        if command == "report":
                            return [str(exe), "report", str(files[side, "a"])]
                        return [str(exe), "compare", str(files[side, "a"]), str(files[side, "b"])]

                    result = pair(
                        lambda: measure(argv(OURS, "ours"), env, cwd),
                        None
                        if pred_exe is None
                        else (lambda: measure(argv(pred_exe, "pred"), env, cwd)),
                        pairs if attempts < 50_000 else max(1, pairs // 2),
                    )
                    row(
                        f"{command} of {'two runs' if command == 'compare' else 'a run'}",
                        attempts,
                        result,
                    )

        if per_attempt:
            say()
            say("## Per attempt, the fixed cost taken out")
            say()
            say(
                f"Each side ran every row at k={small_k} and at the row's k in each pair: the "
                "difference per extra attempt is the **marginal** cost (start-up, pre-flight "
                "and saving cancel out). **Harness work** is the marginal cost minus the fake's "
                "starts (1 a attempt, 2 with a judge) at the floor measured inside the same "
                "pair (the fake agent alone started by a bare loop, column *floor ms*), for the "
                "1-worker rows only (with more workers the starts overlap). Median (min–max) "
                "over the pairs."
            )
            say()
            say(
                "| work | ours ms / attempt | predecessor ms / attempt | ours / predecessor "
                "(marginal) | ours harness ms | predecessor harness ms | ours / predecessor "
                "(harness work) | floor ms |"
            )
            say("| --- | --- | --- | --- | --- | --- | --- | --- |")
            for label, extra, result, starts, workers in per_attempt:
                ours_ms = [t / extra * 1000 for t in result["ours_extra"]]
                pred_ms = [t / extra * 1000 for t in result["pred_extra"]]
                if workers == 1:
                    floors = result["floor_ms"]
                    ours_h = [t - starts * f for t, f in zip(ours_ms, floors, strict=True)]
                    pred_h = [t - starts * f for t, f in zip(pred_ms, floors, strict=bool(pred_ms))]
                    ratio_h = [a / b for a, b in zip(ours_h, pred_h, strict=bool(pred_h)) if b > 0]
                else:
                    ours_h = pred_h = ratio_h = floors = []
                say(
                    f"| {label} | {spread(ours_ms, '{:.1f}')} | {spread(pred_ms, '{:.1f}')} | "
                    f"{spread(result.get('marginal_ratio', []))} | {spread(ours_h, '{:.1f}')} | "
                    f"{spread(pred_h, '{:.1f}')} | {spread(ratio_h)} | {spread(floors, '{:.1f}')} |"
                )

        # ours alone: scaling of the per-attempt cost, parallel efficiency
        say()
        say("## Ours alone")
        say()
        if not only or "scaling" in only:
            say(
                "| attempts (activates-only, 2 workers) | wall s | per attempt ms | "
                "marginal ms per attempt (since the size above) |"
            )
            say("| --- | --- | --- | --- |")
            before: tuple[int, float] | None = None
            for attempts in (8, 40) if smoke else (100, 1_000, 10_000):
                tasks = attempts // 10 if attempts >= 10 else 1
                k = attempts // tasks
                ours_spec, _ = space.specs(f"scale-{attempts}", tasks, "activates")
                wall, _ = measure(
                    run_argv(OURS, ours_spec, k, 2, space.root / "scale.json"), env, cwd
                )
                marginal = (
                    "—"
                    if before is None
                    else f"{(wall - before[1]) / (attempts - before[0]) * 1000:.1f}"
                )
                say(f"| {attempts} | {wall:.1f} | {wall / attempts * 1000:.1f} | {marginal} |")
                before = (attempts, wall)
            say()
        if not only or "floor" in only:
            say(
                f"The fake agent alone, started by a bare loop one after another (a fresh "
                f"folder each): {floor_ms:.1f} ms per start."
            )
            say()
        if not only or "parallel" in only:
            delay = "0.5"
            attempts = 4 if smoke else 16
            say(
                f"| workers ({attempts} attempts, a {delay} s agent) | wall s | ideal s | "
                "efficiency |"
            )
            say("| --- | --- | --- | --- |")
            ours_spec, _ = space.specs("parallel", attempts // 2, "activates")
            (space.root / "fake" / "delay").write_text(delay + "\n")
            for workers in (1, 4, 8):
                wall, _ = measure(
                    run_argv(OURS, ours_spec, 2, workers, space.root / "par.json"), env, cwd
                )
                ideal = -(-attempts // workers) * float(delay)
                say(f"| {workers} | {wall:.2f} | {ideal:.2f} | {ideal / wall:.0%} |")
            (space.root / "fake" / "delay").unlink()
    say()
    say(
        f"Machine: {platform.platform()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load average at the end "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}."
    )
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    if shutil.which(TIME) is None:
        raise SystemExit(f"{TIME} is needed (GNU time, for the peak RSS)")
    sys.exit(main())
