"""The gate of a ``caliper run --k auto`` run, through the real ``caliper`` script and the
fake agent at seeded outcomes: every bar is judged by the sequential test that stopped its
task, the interval shown is the confidence sequence, and the view and JUnit say so.

Numbers worked by hand: after n straight passes the 95 % confidence sequence is
[(α / (n + 1))^(1/n), 1] (docs/statistics.md), so 7/7 → [(0.05/8)^(1/7), 1] = [48.4 %, 100 %]
and 12/12 → [(0.05/13)^(1/12), 1] = [62.9 %, 100 %]. Wilson would give 12/12 → [75.8 %, 100 %]
(n / (n + z²)), which "meets" 70 % although the sequential test cannot decide 70 % in 12
straight passes, and 6/12 → [25.4 %, 74.6 %], which "fails" 80 % although the test had not
decided it either: the old gate contradicted the stop reasons the run printed.
"""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET

import pytest
from gate_support import seeded_spec

from caliper_fakeagent.harness import CALIPER, Workspace

PATTERNS = {"always": "P" * 12, "perfect": "P" * 12, "half": "PPPPPPFFFFFF"}
BARS = ("--min-score", "always=0.5", "--min-score", "perfect=0.7", "--min-score", "half=0.8")


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
    assert done.task("perfect")["stop_reason"].startswith("--max-k 12 reached (bar 70.0% still")
    assert done.task("half")["stop_reason"].startswith("--max-k 12 reached (bar 80.0% still")
    out = done.stdout
    assert "anytime-valid: sequential tests and confidence sequences" in out
    assert (
        "✓ met  success of task 'always' ≥ 50%\n      7/7 = 100% [48.4%–100%]  by the "
        "sequential test (anytime-valid, --k auto)"
    ) in out
    assert (
        "~ inconclusive  success of task 'perfect' ≥ 70%\n      12/12 = 100% [62.9%–100%]"
    ) in out
    assert "~ inconclusive  success of task 'half' ≥ 80%\n      6/12 = 50%" in out
    assert "Gate: PASSED (3 of 3 bars)" in out


def test_junit_says_what_judged_each_bar(adaptive) -> None:
    _space, _spec, _done, junit = adaptive
    cases = {
        case.get("name"): case
        for case in ET.parse(junit).getroot().iter("testcase")
        if case.get("classname", "").endswith(".bars")
    }
    perfect = cases["success of task 'perfect' ≥ 70%"]
    text = perfect.findtext("system-out") or ""
    assert "judged by: sequential test (anytime-valid, --k auto)" in text
    assert "could not tell whether the rate is above or below 70%" in text


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
    assert perfect["interval"]["low"] == pytest.approx((0.05 / 13) ** (1 / 12), abs=1e-6)
    assert bars["always"]["interval"]["low"] == pytest.approx((0.05 / 8) ** (1 / 7), abs=1e-6)


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
