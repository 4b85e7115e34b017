"""`caliper compare --junit PATH` and `--format markdown`, through the real script.

Two saved runs of one spec: a task that drops from 10/10 to 0/10 (Fisher's exact two-sided
p = 2 / C(20, 10) = 1.08e-5; its adjusted p is the whole-run test's, which is tested first),
a task that
stays at 5/10, one that goes 3/3 → 2/3 (a drop, but p = 1: not significant), and a task that
is only in the after run. The JUnit file is validated with the schema of
``test_run_junit.py``; the Markdown is read back through markdown-it's GFM tables.
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from gate_support import JUNIT_SCHEMA as SCHEMA
from gate_support import markdown_tables as tables
from gate_support import render_markdown
from test_results_support import F, P, caliper, run, task

from caliper.results.store import save_run

ODD = "odd | name *x*"


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path, Path]:
    spec = tmp_path / "demo.eval.yaml"
    spec.write_text("tasks: []\n")
    before = run(
        [task("drops", [P] * 10), task("steady", [P] * 5 + [F] * 5), task("noise", [P, P, P])],
        k=10,
    )
    after = run(
        [
            task("drops", [F] * 10),
            task("steady", [F] * 5 + [P] * 5),
            task("noise", [P, F, P]),
            task(ODD, [P]),
        ],
        k=10,
        run_id="2026-11-30T19-00-00Z",
    )
    previous = os.getcwd()
    os.chdir(tmp_path)
    try:
        a = save_run(before, spec_path=spec)
        b = save_run(after, spec_path=spec)
    finally:
        os.chdir(previous)
    return tmp_path, a, b


def test_compare_junit(pair) -> None:
    project, a, b = pair
    target = project / "compare.xml"
    done = caliper("compare", str(a), str(b), "--junit", str(target), cwd=project)
    assert done.returncode == 1, done.stdout + done.stderr  # 'drops' regressed
    SCHEMA.validate(str(target))
    suite = ET.parse(target).getroot().find("testsuite")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases) == ["drops", "steady", "noise", "whole run", ODD]
    failure = cases["drops"].find("failure")
    assert failure is not None and failure.get("type") == "regressed"
    assert "regressed: 100% → 0%" in failure.get("message", "")
    # gatekeeping: the task's adjusted p is the larger of its Holm p and the whole run's
    data = json.loads(caliper("compare", str(a), str(b), "--format", "json", cwd=project).stdout)
    drops = next(t for t in data["tasks"] if t["name"] == "drops")
    assert drops["p_adjusted"] == pytest.approx(data["p_value"]) and data["p_value"] > 0.001
    assert f"p={data['p_value']:.3g}" in failure.get("message", "")
    assert "before: ✓✓✓✓✓✓✓✓✓✓\nafter:  ✗✗✗✗✗✗✗✗✗✗" in (failure.text or "")
    assert cases["noise"].find("failure") is None
    assert "not significant: 100% → 66.7%" in cases["noise"].find("system-out").text
    assert cases["steady"].find("failure") is None
    assert cases[ODD].find("skipped") is not None
    # The whole-run case follows compare's own overall verdict.
    whole_failed = cases["whole run"].find("failure") is not None
    assert whole_failed is (data["overall_verdict"] == "regressed")
    assert (suite.get("tests"), suite.get("skipped")) == ("5", "1")
    assert suite.get("failures") == str(1 + whole_failed)


def test_compare_markdown(pair) -> None:
    project, a, b = pair
    done = caliper("compare", str(a), str(b), "--format", "markdown", cwd=project)
    assert done.returncode == 1, done.stderr
    table, spend = tables(done.stdout)  # the tasks, then cost and time changes
    assert spend[0] == ["Measure", "Mean before → after", "Δ", "p (adj.)", "Verdict"]
    header, drops, steady, noise, whole = table
    assert header[:6] == ["Task", "Before", "After", "Δ (interval)", "p (adj.)", "Verdict"]
    # the task's adjusted p is the whole run's (tested first), larger than its own Holm p
    assert drops[:3] == ["drops", "100%", "0%"] and drops[4] == whole[4] != "<0.001"
    assert drops[5] == "❌ regressed"
    assert drops[6:] == ["✓" * 10, "✗" * 10]
    assert steady[5] == "➖ no change"
    assert noise[5] == "➖ not significant" and noise[3].startswith("−33.3 pts [")
    assert whole[0] == "whole run (3 tasks)"
    text = "".join(render_markdown(done.stdout).itertext())
    assert "Only in the after run (not compared): odd | name *x*" in text


def test_ablation_headline_in_markdown(tmp_path: Path) -> None:
    """The ablation pair's sentence heads the summary and is in the JUnit whole-run case
    (a 0/10 → 10/10 task: p ≈ 1.1e-5)."""
    spec = tmp_path / "demo.eval.yaml"
    spec.write_text("tasks: []\n")
    control = run([task("uses it", [F] * 10)], k=10, ablated=["my-skill"])
    full = run([task("uses it", [P] * 10)], k=10, run_id="2026-11-30T19-00-00Z")
    previous = os.getcwd()
    os.chdir(tmp_path)
    try:
        a, b = save_run(control, spec_path=spec), save_run(full, spec_path=spec)
    finally:
        os.chdir(previous)
    junit = tmp_path / "compare.xml"
    done = caliper(
        "compare", str(a), str(b), "--format", "markdown", "--junit", str(junit), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    whole = next(
        c for c in ET.parse(junit).getroot().iter("testcase") if c.get("name") == "whole run"
    )
    assert "my-skill adds +100" in (whole.find("system-out").text or "")
    strong = ["".join(e.itertext()) for e in render_markdown(done.stdout).iter("strong")]
    assert any(s.startswith("my-skill adds +100") and "p<0.001" in s for s in strong), strong
