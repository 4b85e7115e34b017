"""`caliper report --format markdown` (for $GITHUB_STEP_SUMMARY), through the real script.

The output is parsed with markdown-it-py (the CommonMark parser rich is built on) with GFM
tables enabled, and the table cells are read back from the HTML it renders: so the tests
check what GitHub would show, e.g. that a `|` in a task name stays inside its cell.
"""

from __future__ import annotations

import subprocess

import pytest
from gate_support import markdown_tables as tables
from gate_support import render_markdown, seeded_spec

from caliper_fakeagent.harness import CALIPER, Workspace

ODD = 'odd <b>name</b> & "quotes" | *pipe* _x_ [link](http://e.x)'
ODD_TASK = f"""\
  - name: '{ODD}'
    prompt: "fake: say hi"
    assert: "assert False, 'no'"
"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory):
    space = Workspace.create(tmp_path_factory.mktemp("markdown"))
    spec = seeded_spec(space, {"always": "PPPP", "mostly": "PPPF"}, extra=ODD_TASK)
    done = space.run(spec, "--k", "4", "--workers", "1", timeout=120)
    assert done.returncode == 0, done.stderr
    return space, spec


def report(space: Workspace, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CALIPER), "report", *args, "--format", "markdown"],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_task_table_with_rates_intervals_and_strips(saved) -> None:
    space, spec = saved
    done = report(space, str(spec))
    assert done.returncode == 0, done.stderr
    task_table, spend = tables(done.stdout)  # the tasks, then cost and time
    assert spend[-1][0] == "whole run"
    header, *rows = task_table
    assert header == ["Task", "Passed", "Success", "95% interval", "Attempts", "Status"]
    # Wilson 95 % by hand (z = 1.95996): 4/4 → [n/(n+z²), 1] = [51.0 %, 100 %];
    # 3/4 → centre 0.6275 ± 0.3269 = [30.1 %, 95.4 %]; 0/4 → [0, z²/(n+z²)] = [0 %, 49 %].
    # 4/4: continuity-corrected score interval, R's prop.test(4, 4): [39.6%, 100%]
    assert rows[0] == ["always", "4/4", "100%", "39.6%–100%", "✓✓✓✓", "✅ PASS"]
    assert rows[1] == [
        "mostly",
        "3/4",
        "75%",
        "21.9%–98.7%",
        "✓✓✓✗",
        "⚠️ PARTIAL",
    ]  # prop.test(3, 4)
    assert rows[2][0] == ODD  # every character shown as written, no markup, one cell
    assert len(rows[2]) == 6 and rows[2][-1] == "❌ FAIL"
    root = render_markdown(done.stdout)
    markup = [e.tag for td in root.iter("td") for e in td.iter() if e is not td]
    assert markup == []  # no <b>, <em>, <a> from the task name
    assert "".join(root.find("h2").itertext()) == "Caliper: demo (fake:fake-model-1)"


def test_bars_table(saved) -> None:
    space, spec = saved
    # exact (Clopper–Pearson) bounds: 4/4 → [39.8 %, 100 %], 0/4 → [0 %, 60.2 %]
    done = report(space, str(spec), "--min-score", "always=0.35", "--min-score", f"{ODD}=0.9")
    assert done.returncode == 3  # the odd task's bar failed
    _tasks, _spend, bars = tables(done.stdout)
    assert bars[0] == ["Bar", "Verdict", "Rate", "Interval", "Counts as"]
    assert bars[1] == [
        "success of task 'always' ≥ 35%",
        "✅ met",
        "4/4 = 100%",
        "39.8%–100%",
        "pass",
    ]
    assert bars[2][0] == f"success of task '{ODD}' ≥ 90%"
    assert bars[2][1:] == ["❌ failed", "0/4 = 0%", "0%–60.2%", "fail"]
    assert "**Gate: FAILED** (1 of 2 bars not met)" in done.stdout
