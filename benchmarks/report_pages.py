"""Page budgets of issue 33: a 5,000-attempt run page and a 10-run history page.

Builds a synthetic run (``expect:`` verdicts with judge usage, skill loads and shell / read /
edit tool calls, kept transcripts of a few kB an attempt) and a 10-run history, then times:

* generation: ``caliper report RUN --format html`` and ``caliper history SPEC --format html``
  as real processes, wall and CPU (user+sys of the child);
* load in headless Chromium: navigation start to the load event (``performance.timing``),
  and to the first attempt button in the tasks table;
* opening a transcript: the click on an attempt until the viewer shows that attempt and is
  painted (two animation frames), the first open (right after the load event: it waits for
  the page's packed attempt data to be unpacked) and a later one; and for the first, the time
  from the load event to the viewer painted (``first_since_load``: a click that the page's
  unpacking delays counts from the load event, not from when the click's script ran);
* unpacking the attempt data again on the loaded page (base64, gzip and ``JSON.parse``).

Median and spread (min–max) over ``--reps`` repetitions, against the targets (gen ≤ 3 s,
load ≤ 1 s, transcript ≤ 0.5 s). Run: ``.venv/bin/python benchmarks/report_pages.py
[--smoke] [--attempts N] [--runs N] [--reps N] [--scratch DIR] [--json]``. Exit 0 always:
benchmarks measure, they do not assert (``--smoke`` is what a test runs so it cannot rot).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from caliper.plugin.attempt import Turn, Usage
from caliper.results import codec
from caliper.results.models import (
    AttemptRecord,
    CheckRecord,
    Outcome,
    RunMeta,
    RunResults,
    SkillSnapshot,
    TaskResult,
)

CALIPER = Path(sys.executable).parent / "caliper"
TARGETS = {"gen": 3.0, "load": 1.0, "transcript": 0.5}
K = 10
CYCLE = [Outcome.PASS] * 6 + [Outcome.TASK_FAIL] * 3 + [Outcome.INFRA_ERROR]
CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--window-size=1400,1000",
)


def _transcript(i: int, j: int, skill: bool) -> list[Turn]:
    """About 4 kB: text, a skill load, a shell call, a file read, an edit and an answer."""
    source = "".join(f"    line {n}: value = compute({n}, {i}, {j})\n" for n in range(36))
    turns = [Turn("assistant", f"I will look at the repository first (task {i}). " * 5)]
    if skill:
        loaded = "Loaded skill helper.\n" + "Use it for chores. " * 10
        turns.append(
            Turn("tool", tool_name="Skill", tool_input={"skill": "helper"}, tool_output=loaded)
        )
    turns += [
        Turn(
            "tool",
            tool_name="Bash",
            tool_input={"command": f"git log --oneline -20 && ls -la src/ # {j}"},
            tool_output="".join(f"{n:07x} commit message number {n}\n" for n in range(24)),
            is_error=False,
        ),
        Turn("tool", tool_name="Read", tool_input={"file_path": "src/app.py"}, tool_output=source),
        Turn(
            "tool",
            tool_name="Edit",
            tool_input={"file_path": "src/app.py", "old": "value = 1", "new": "value = 2" * 20},
            tool_output="The file src/app.py has been updated.",
        ),
        Turn("assistant", "Done: I changed the value and checked the log. " * 6),
    ]
    return turns


def _attempt(i: int, j: int) -> AttemptRecord:
    outcome = CYCLE[(i + j) % len(CYCLE)]
    skill = j % 2 == 0
    checks = []
    if outcome is not Outcome.INFRA_ERROR:
        checks.append(
            CheckRecord(
                key="expect",
                passed=outcome is Outcome.PASS,
                reason="The answer names the change and the value. " * 3,
                usage=Usage(1800, 120, 0, 0, cost_usd=0.0061),
                backend="claude-code",
                model="judge-1",
            )
        )
        checks.append(CheckRecord(key="activates", passed=skill))
    return AttemptRecord(
        task_name=f"task {i:03d}",
        attempt=j + 1,
        outcome=outcome,
        reason=None if outcome is Outcome.PASS else "The value is still 1.",
        duration_seconds=20.0 + (i * 7 + j) % 40,
        usage=Usage(12000 + i, 900 + j, 30000, 2000),
        final_answer="Done: I changed the value and checked the log.",
        transcript=None if outcome is Outcome.INFRA_ERROR else _transcript(i, j, skill),
        activated=["helper"] if skill else [],
        activation_passed=skill if outcome is not Outcome.INFRA_ERROR else None,
        checks=checks,
        model="claude-sonnet-5",
        error="HTTP 529 overloaded" if outcome is Outcome.INFRA_ERROR else None,
    )


def synthetic_run(attempts: int, spec: str, run_id: str) -> RunResults:
    """``attempts`` attempts (tasks of k=10) of spec ``spec``."""
    tasks = []
    for i in range(max(1, attempts // K)):
        tasks.append(
            TaskResult(
                name=f"task {i:03d}",
                index=i,
                k=K,
                attempts=[_attempt(i, j) for j in range(K)],
                activation_expected=["helper"],
                check_keys=["expect", "activates"],
            )
        )
    meta = RunMeta(
        run_id=run_id,
        spec_name=spec,
        spec_path=f"{spec}.eval.yaml",
        started_at=f"{run_id[:10]}T{run_id[11:19].replace('-', ':')}+00:00",
        backend="claude-code",
        model="claude-sonnet-5",
        judge_backend="claude-code",
        judge_model="judge-1",
        caliper_version="0.1.0",
        k=K,
        skill_snapshots=[
            SkillSnapshot(
                name="helper", source_kind="path", declared_as="./skills/helper", path=None
            )
        ],
    )
    return RunResults(meta=meta, tasks=tasks)


def _save(results: RunResults, root: Path) -> Path:
    folder = root / ".caliper" / "results" / results.meta.spec_name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{results.meta.run_id}.json"
    path.write_text(codec.dumps(results), encoding="utf-8")
    return path


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU (user+sys) seconds of the process ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not binary or not driver:
        return None, None
    profile = Path(tempfile.mkdtemp(prefix="caliper-bench-chromium-"))
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in (*CHROME_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    session = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    session.set_page_load_timeout(300)
    return session, profile


LOAD_JS = """
const t = performance.timing;
const first = performance.getEntriesByName('first-contentful-paint')[0];
return {load: t.loadEventEnd - t.navigationStart,
        dom: t.domContentLoadedEventEnd - t.navigationStart,
        paint: first ? first.startTime : null};
"""

OPEN_JS = """
const done = arguments[arguments.length - 1];
const buttons = document.querySelectorAll('#tasks button.att');
const button = buttons[arguments[0] % buttons.length];
const viewer = document.getElementById('viewer');
const shows = () => !viewer.hidden && viewer.dataset.attempt === button.dataset.id;
const painted = () => requestAnimationFrame(() => requestAnimationFrame(() => {
  const now = performance.timeOrigin + performance.now();
  done({ms: performance.now() - start, shown: shows(),
        since_load: now - performance.timing.loadEventEnd,
        turns: viewer.querySelectorAll('.turn').length});
}));
const start = performance.now();
button.click();
if (shows()) painted();
else {
  const watch = new MutationObserver(() => { if (shows()) { watch.disconnect(); painted(); } });
  watch.observe(viewer, {attributes: true});
}
"""

UNPACK_JS = """
const done = arguments[arguments.length - 1];
if (typeof attemptData !== 'function') { done(null); return; }
attemptsPromise = null;
attemptsValue = null;
const start = performance.now();
attemptData().then(() => done(performance.now() - start));
"""


def page_load(driver, page: Path, reps: int, transcript: bool) -> dict[str, list[float]]:
    """Seconds to the load event per repetition (and to open a transcript, first and later,
    and to unpack the attempt data again)."""
    out: dict[str, list[float]] = {
        "load": [],
        "dom": [],
        "first_open": [],
        "later_open": [],
        "first_since_load": [],
        "unpack": [],
    }
    for rep in range(reps):
        driver.get("about:blank")
        driver.get(page.resolve().as_uri())
        timing = driver.execute_script(LOAD_JS)
        out["load"].append(timing["load"] / 1000)
        out["dom"].append(timing["dom"] / 1000)
        if transcript:
            first = driver.execute_async_script(OPEN_JS, 7 + rep)
            later = driver.execute_async_script(OPEN_JS, 1234 + rep)
            if not (first["shown"] and later["shown"]):
                raise SystemExit("the transcript viewer did not open")
            out["first_open"].append(first["ms"] / 1000)
            out["later_open"].append(later["ms"] / 1000)
            out["first_since_load"].append(first["since_load"] / 1000)
            unpack = driver.execute_async_script(UNPACK_JS)
            if unpack is not None:
                out["unpack"].append(unpack / 1000)
    return {k: v for k, v in out.items() if v}


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="small N, 1 repetition")
    parser.add_argument("--attempts", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=10, help="runs in the history")
    parser.add_argument("--history-attempts", type=int, default=500, help="attempts a run")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--scratch", type=Path, default=None)
    parser.add_argument("--no-browser", action="store_true")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    if args.smoke:
        args.attempts, args.runs, args.history_attempts, args.reps = 50, 2, 20, 1
    root = args.scratch or Path(tempfile.mkdtemp(prefix="caliper-pages-bench-"))
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    big = _save(synthetic_run(args.attempts, "big", "2026-12-01T10-00-00Z"), root)
    for n in range(args.runs):
        _save(synthetic_run(args.history_attempts, "hist", f"2026-12-{n + 2:02d}T10-00-00Z"), root)
    run_page, history_page = root / "run.html", root / "history.html"
    figures: dict[str, Any] = {
        "attempts": args.attempts,
        "runs": args.runs,
        "history_attempts": args.history_attempts,
        "run_json_mb": big.stat().st_size / 1e6,
        "load_average": os.getloadavg(),
        "cpus": os.cpu_count(),
    }
    gens: dict[str, list[tuple[float, float]]] = {"run": [], "history": []}
    for _ in range(args.reps):
        report = [str(CALIPER), "report", str(big), "--format", "html", "-o", str(run_page)]
        gens["run"].append(timed(report, root))
        history = [str(CALIPER), "history", "hist", "--format", "html", "-o", str(history_page)]
        gens["history"].append(timed(history, root))
    for name, pairs in gens.items():
        figures[f"gen_{name}_wall"] = _summary([w for w, _ in pairs])
        figures[f"gen_{name}_cpu"] = _summary([c for _, c in pairs])
    figures["run_page_mb"] = run_page.stat().st_size / 1e6
    figures["history_page_mb"] = history_page.stat().st_size / 1e6
    driver, profile = (None, None) if args.no_browser else _browser()
    if driver is not None:
        try:
            for name, value in page_load(driver, run_page, args.reps, True).items():
                figures[f"run_{name}"] = _summary(value)
            for name, value in page_load(driver, history_page, args.reps, False).items():
                figures[f"history_{name}"] = _summary(value)
        finally:
            driver.quit()
            shutil.rmtree(profile, ignore_errors=True)
    figures["load_average_after"] = os.getloadavg()
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        _print(figures)
    if args.scratch is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def _print(figures: dict[str, Any]) -> None:
    print(
        f"{figures['attempts']} attempts ({figures['run_json_mb']:.1f} MB JSON, page "
        f"{figures['run_page_mb']:.1f} MB); history of {figures['runs']} runs × "
        f"{figures['history_attempts']} (page {figures['history_page_mb']:.1f} MB); "
        f"load average {figures['load_average'][0]:.1f} on {figures['cpus']} CPUs"
    )
    rows = [
        ("gen_run_wall", "gen"),
        ("gen_run_cpu", None),
        ("gen_history_wall", "gen"),
        ("gen_history_cpu", None),
        ("run_load", "load"),
        ("run_dom", None),
        ("run_first_open", "transcript"),
        ("run_later_open", "transcript"),
        ("run_first_since_load", "transcript"),
        ("run_unpack", None),
        ("history_load", "load"),
    ]
    for key, target in rows:
        if key not in figures:
            continue
        s = figures[key]
        goal = f"target ≤ {TARGETS[target]} s" if target else ""
        print(f"  {key:20} median {s['median']:.3f} s  [{s['min']:.3f}–{s['max']:.3f}]  {goal}")


if __name__ == "__main__":
    raise SystemExit(main())
