"""The gate of a ``caliper run --k auto`` run, through the real ``caliper`` script and the
fake agent at seeded outcomes: every bar is judged by the sequential test that stopped its
task, the interval shown is the confidence sequence, and the view and JUnit say so.

Numbers worked by hand: after n straight passes the 95 % confidence sequence shown is
[(α / (n + 1))^(1/n), 1] (docs/statistics.md), so 5/5 → [(0.05/6)^(1/5), 1] = [38.4 %, 100 %]
and 10/10 → [(0.05/11)^(1/10), 1] = [58.3 %, 100 %]. 'perfect' stops at 10/10 against 95 %
(a bar 12 attempts can never meet) once it can no longer fail either, 'half' at 6/8 against
60 % because neither boundary can be reached within --max-k 12 any more; Wilson would give
10/10 → [72.2 %, 100 %] and 6/8 → [40.9 %, 92.9 %]: the gate follows the stop reasons the
run printed, not a fixed-k interval.
"""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET

import pytest
from gate_support import seeded_spec

from caliper_fakeagent.harness import CALIPER, Workspace

PATTERNS = {"always": "P" * 12, "perfect": "P" * 12, "half": "PPPPPPFFFFFF"}
BARS = ("--min-score", "always=0.5", "--min-score", "perfect=0.95", "--min-score", "half=0.6")


@pytest.fixture(scope="module")
def adaptive(tmp_path_factory: pytest.TempPathFactory):
    space = Workspace.create(tmp_path_factory.mktemp("adaptive-gate"))
    spec = seeded_spec(space, PATTERNS)
    junit = space.root / "junit.xml"
    done = space.run(
        spec,
        "--k",
        "auto",
        "--max-k",
        "12",
        "--workers",
        "1",  # attempts finish in number order, so each task sees its pattern in order
        *BARS,
        "--inconclusive",
        "pass",
        "--junit",
        str(junit),
        timeout=240,
    )
    return space, spec, done, junit


def test_each_bar_follows_the_decision_that_stopped_its_task(adaptive) -> None:
    _space, _spec, done, _junit = adaptive
    assert done.returncode == 0, done.stdout + done.stderr  # Wilson failed 'half': exit 3
    assert done.task("always")["stop_reason"].startswith("bar 50.0% met")
    assert done.task("perfect")["stop_reason"].startswith("bar 95.0% cannot be met within --max-k")
    assert done.task("half")["stop_reason"].startswith("bar 60.0% can no longer be met")
    out = done.stdout
    assert "anytime-valid: sequential tests and confidence sequences" in out
    assert (
        "✓ met  success of task 'always' ≥ 50%\n      5/5 = 100% [38.4%–100%]  by the "
        "sequential test (anytime-valid, --k auto)"
    ) in out
    assert (
        "~ inconclusive  success of task 'perfect' ≥ 95%\n      10/10 = 100% [58.3%–100%]"
    ) in out
    assert "~ inconclusive  success of task 'half' ≥ 60%\n      6/8 = 75%" in out
    assert "Gate: PASSED (3 of 3 bars)" in out


def test_junit_says_what_judged_each_bar(adaptive) -> None:
    _space, _spec, _done, junit = adaptive
    cases = {
        case.get("name"): case
        for case in ET.parse(junit).getroot().iter("testcase")
        if case.get("classname", "").endswith(".bars")
    }
    perfect = cases["success of task 'perfect' ≥ 95%"]
    text = perfect.findtext("system-out") or ""
    assert "judged by: sequential test (anytime-valid, --k auto)" in text
    assert "could not tell whether the rate is above or below 95%" in text


def test_report_judges_a_saved_adaptive_run_the_same_way(adaptive) -> None:
    space, spec, _done, _junit = adaptive
    done = subprocess.run(
        [str(CALIPER), "report", str(spec), "--format", "json", *BARS],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 3, done.stderr  # --inconclusive fail (the default) here
    assert "needs more attempts (--max-k) to decide" in done.stderr
    bars = {bar["task"]: bar for bar in json.loads(done.stdout)["gate"]["bars"]}
    assert [bars[t]["verdict"] for t in ("always", "perfect", "half")] == [
        "met",
        "inconclusive",
        "inconclusive",
    ]
    perfect = bars["perfect"]
    assert perfect["judged_by"] == "sequential-test"
    assert perfect["interval"]["method"] == "confidence-sequence"
    assert perfect["interval"]["low"] == pytest.approx((0.05 / 11) ** (1 / 10), abs=1e-6)
    assert bars["always"]["interval"]["low"] == pytest.approx((0.05 / 6) ** (1 / 5), abs=1e-6)


def test_the_saved_gate_says_the_sequential_test_judged_it(adaptive) -> None:
    _space, _spec, done, _junit = adaptive
    bars = {bar["task"]: bar for bar in done.results["meta"]["gate"]["bars"]}
    assert bars["perfect"]["judged_by"] == "sequential-test"
    assert bars["perfect"]["verdict"] == "inconclusive" and bars["perfect"]["passed"] is True


def test_markdown_summary_says_the_bars_were_judged_anytime_valid(adaptive) -> None:
    space, spec, _done, _junit = adaptive
    done = subprocess.run(
        [str(CALIPER), "report", str(spec), "--format", "markdown", *BARS],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "### Bars (95% anytime-valid: sequential tests and confidence sequences" in done.stdout


@pytest.mark.parametrize("bar", ["0.5", "0.8", "0.9"])
def test_a_run_bar_met_by_every_task_passes_before_max_k(
    tmp_path_factory: pytest.TempPathFactory, bar: str
) -> None:
    """With --k auto a run-wide bar is the bar each task stops against: when every task met
    it, the run bar is met (before, the run bar was judged on a mean of confidence
    sequences that could never clear it at those stopping points, so this exited 3)."""
    space = Workspace.create(tmp_path_factory.mktemp("run-bar"))
    spec = seeded_spec(space, {"always": "P" * 40, "also": "P" * 40})
    done = space.run(
        spec, "--k", "auto", "--max-k", "40", "--workers", "1", "--min-score", bar, timeout=400
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for task in ("always", "also"):
        assert done.task(task)["stop_reason"].startswith(f"bar {float(bar) * 100:.1f}% met")
        assert len(done.task(task)["attempts"]) < 40
    assert "by the sequential test of every task (--k auto)" in done.stdout


def test_a_run_bar_below_the_truth_fails_and_says_why(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    space = Workspace.create(tmp_path_factory.mktemp("run-bar-low"))
    spec = seeded_spec(space, {"always": "P" * 40, "half": "PF" * 20})
    done = space.run(
        spec, "--k", "auto", "--max-k", "40", "--workers", "1", "--min-score", "0.8", timeout=400
    )
    assert done.returncode == 3, done.stdout + done.stderr
    # 3/6 cannot reach the met boundary within 40 attempts: under --inconclusive fail the
    # gate's outcome is settled, so the task stops there
    assert done.task("half")["stop_reason"].startswith("bar 80.0% can no longer be met")
    assert "of 2 tasks 1 met it, 0 failed it, 1 undecided" in done.stderr
