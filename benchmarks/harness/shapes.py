"""``report`` and ``compare`` on realistic result files, A/B against the predecessor.

Run from the repository root::

    .venv/bin/python benchmarks/harness/shapes.py --sizes 5000,20000 --pairs 5
    .venv/bin/python benchmarks/harness/shapes.py --smoke     # tiny, no predecessor

Each harness makes one real run of ``expect:`` + ``assert:`` tasks on the fake ``claude``
(``fakes.py``: the judge's verdict carries its usage, transcripts are kept), grown by copying
to each size (``bench.blow_up``). The second run of each compare is the same run with every
tenth passing attempt turned into a failure of its ``expect:`` check (real regressions, not an
identical copy) and every attempt's agent time changed by up to ±20 % (two real runs never
take the same time; identical times hid the cost of compare's time tests), written in each
harness's own format. Every measurement is a whole process
under GNU ``/usr/bin/time``: wall seconds and CPU seconds (user + sys, which include the
process's waited-for children: the process tree), the two sides alternating. Ratios are
``ours / predecessor`` pair by pair, printed as ``median (min–max)``.

Ours' copies are stored where ``caliper run`` stores runs (``.caliper/results/SPEC/``), where
the first read without transcripts saves a run's records sidecar for later reads
(``caliper.results.records_cache``): each command is timed as a first read (ours' sidecars
deleted, untimed, before each of ours) and again with them saved.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench import OURS, TIME, Workspace, blow_up, predecessor, spread

FLIP_EVERY = 10


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int]:
    """(wall s, user+sys CPU s of the process tree, peak RSS KiB) of one whole process.

    Exit 1 is accepted from ``compare`` (a regression found: what the flipped passes are
    for, docs/exit-codes.md); any other failure stops the benchmark."""
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
    if done.returncode not in ((0, 1) if argv[1] == "compare" else (0,)):
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return wall, float(user) + float(system), int(rss)


def spec_text(tasks: int, suffix: str) -> str:
    """A spec of ``tasks`` tasks, each with an ``expect:`` (LLM judge) and an ``assert:``."""
    body = (
        "    expect: The agent greeted the team loudly.\n"
        "    assert: |\n      from pathlib import Path\n"
        '      assert Path("greeting.txt").exists()\n'
    )
    listed = "".join(
        f"  - name: task {i:05d}\n    prompt: Please greet the team ({i}).\n{body}"
        for i in range(tasks)
    )
    return f"skills:\n  - ./skills/shout{suffix}\n  - ./skills/whisper{suffix}\ntasks:\n{listed}"


def retime(attempt: dict, number: int) -> None:
    """Change the agent time of a file's ``number``-th attempt by a fixed pseudo-random factor
    in 0.80–1.20 (the same in both harnesses' files)."""
    if attempt.get("duration_seconds") is not None:
        attempt["duration_seconds"] *= 1.0 + ((number * 7919) % 41 - 20) / 100


def flip_ours(path: Path) -> int:
    """Turn every tenth passing attempt of our results file into an ``expect:`` failure and
    retime every attempt (:func:`retime`)."""
    data = json.loads(path.read_text())
    seen = flipped = number = 0
    for task in data["tasks"]:
        for attempt in task["attempts"]:
            number += 1
            retime(attempt, number)
            if attempt["outcome"] != "pass":
                continue
            seen += 1
            if seen % FLIP_EVERY:
                continue
            attempt["outcome"] = "task_fail"
            for check in attempt["checks"]:
                if check["key"] == "expect":
                    check["passed"], check["reason"] = False, "The greeting was not loud."
            flipped += 1
    path.write_text(json.dumps(data))
    return flipped


def flip_pred(path: Path) -> int:
    """The same for the predecessor's file (its per-task counts kept consistent)."""
    data = json.loads(path.read_text())
    seen = flipped = number = 0
    for task in data["task_results"]:
        for attempt in task["attempts"]:
            number += 1
            retime(attempt, number)
            if attempt["outcome"] != "pass":
                continue
            seen += 1
            if seen % FLIP_EVERY:
                continue
            attempt.update(outcome="task_fail", passed=False, autorater_passed=False)
            attempt["autorater_reasoning"] = "The greeting was not loud."
            task["successes"] -= 1
            flipped += 1
        if task.get("usable"):
            task["score"] = task["successes"] / task["usable"]
    path.write_text(json.dumps(data))
    return flipped


def paired(
    ours: list[str], pred: list[str] | None, env, cwd, pairs: int, before_ours=lambda: None
) -> dict:
    """``pairs`` alternating measurements of both commands, with per-pair ratios
    (``before_ours`` is called, untimed, before each of ours)."""

    def mine():
        before_ours()
        return timed(ours, env, cwd)

    rows = []
    for i in range(pairs):
        if pred is None:
            rows.append((mine(), None))
        elif i % 2 == 0:
            a = mine()
            rows.append((a, timed(pred, env, cwd)))
        else:
            b = timed(pred, env, cwd)
            rows.append((mine(), b))
    out = {"ours": [r[0] for r in rows], "pred": [r[1] for r in rows if r[1]]}
    if pred is not None:
        for name, index in (("wall", 0), ("cpu", 1), ("rss", 2)):
            out[name] = [a[index] / b[index] for a, b in rows]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, once, no predecessor")
    parser.add_argument("--pairs", type=int, default=5, help="A/B pairs per row")
    parser.add_argument("--sizes", default="5000,50000", help="attempts per run, comma-separated")
    parser.add_argument("--out", type=Path, help="also write the Markdown table here")
    parser.add_argument(
        "--keep", type=Path, help="make the workspace in this (new) folder and keep it"
    )
    args = parser.parse_args()
    pred_exe = None if args.smoke else predecessor()
    pairs = 1 if args.smoke else args.pairs
    base_tasks, k = (2, 2) if args.smoke else (50, 10)
    sizes = [base_tasks * k * 5] if args.smoke else [int(s) for s in args.sizes.split(",")]
    lines: list[str] = []

    def say(text: str = "") -> None:
        print(text, flush=True)
        lines.append(text)

    if args.keep is not None:
        args.keep.mkdir(parents=True)
    kept = contextlib.nullcontext(str(args.keep.resolve())) if args.keep else None
    with kept or tempfile.TemporaryDirectory(prefix="caliper-shapes-") as temp:
        space = Workspace(Path(temp))
        env, cwd = space.env(), space.root
        bases = {}
        for side, exe, suffix in (("ours", OURS, ""), ("pred", pred_exe, "/SKILL.md")):
            if exe is None:
                continue
            spec = space.root / f"shapes-{side}.eval.yaml"
            spec.write_text(spec_text(base_tasks, suffix))
            bases[side] = space.root / f"{side}-base.json"
            argv = [str(exe), "run", str(spec), "--k", str(k), "--workers", "2"]
            subprocess.run(
                [*argv, "--output", str(bases[side])], env=env, cwd=cwd, check=True,
                capture_output=True,
            )  # fmt: skip
        say(
            "| work (`expect:` + `assert:`, judge usage, transcripts) | attempts | ours wall s "
            "| predecessor wall s | ours CPU s | predecessor CPU s | ours / predecessor, wall "
            "| ours / predecessor, CPU (user+sys) | ours / predecessor, peak RSS |"
        )
        say("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for attempts in sizes:
            factor = max(1, attempts // (base_tasks * k))
            files: dict[tuple[str, str], Path] = {}
            for side, key, name_key, flip in (
                ("ours", "tasks", "name", flip_ours),
                ("pred", "task_results", "task_name", flip_pred),
            ):
                if side not in bases:
                    continue
                folder = space.root / (".caliper/results/shapes-ours" if side == "ours" else "")
                folder.mkdir(parents=True, exist_ok=True)
                for number, copy_no in enumerate(("a", "b")):
                    target = folder / f"{side}-{attempts}-{copy_no}.json"
                    blow_up(bases[side], target, factor, key, name_key, number)
                    if copy_no == "b" and not flip(target):
                        raise SystemExit(f"no passing attempt to flip in {target}")
                    files[side, copy_no] = target

            def argv(exe: Path, side: str, command: str, files=files) -> list[str]:
                extra = [] if command == "report" else [str(files[side, "b"])]
                return [str(exe), command, str(files[side, "a"]), *extra]

            def forget(files=files) -> None:  # ours' records sidecars: a first read
                for (side, _), path in files.items():
                    if side == "ours":
                        path.with_name(f".{path.name}.records").unlink(missing_ok=True)

            for command, first in (
                ("report", True),
                ("report", False),
                ("compare", True),
                ("compare", False),
            ):
                result = paired(
                    argv(OURS, "ours", command),
                    None if pred_exe is None else argv(pred_exe, "pred", command),
                    env,
                    cwd,
                    pairs,
                    forget if first else lambda: None,
                )
                work = f"{command} (first read)" if first else command
                say(
                    f"| {work} | {attempts} | {spread([r[0] for r in result['ours']])} | "
                    f"{spread([r[0] for r in result['pred']])} | "
                    f"{spread([r[1] for r in result['ours']])} | "
                    f"{spread([r[1] for r in result['pred']])} | "
                    f"{spread(result.get('wall', []))} | {spread(result.get('cpu', []))} | "
                    f"{spread(result.get('rss', []))} |"
                )
    say()
    say(f"{pairs} A/B pairs a row; load average at the end {os.getloadavg()[0]:.1f}.")
    if args.out is not None:
        args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
