"""``caliper list`` through the real console script."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from test_results_support import CALIPER, P, caliper, make_project, run, snapshot, task

from caliper.results.store import save_run


def test_list_without_spec_counts_runs_per_spec(tmp_path):
    project = make_project(tmp_path)
    out = caliper("list", cwd=project)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    demo = next(line for line in lines if "demo" in line)
    assert " 2 " in demo and "2026-11-30T19-00-00Z" in demo
    other = next(line for line in lines if "other" in line)
    assert " 1 " in other and "2026-11-30T17-00-00Z" in other


def test_list_json_without_spec(tmp_path):
    project = make_project(tmp_path)
    data = json.loads(caliper("list", "--format", "json", cwd=project).stdout)
    assert [(row["spec"], row["runs"], row["latest_run_id"]) for row in data] == [
        ("demo", 2, "2026-11-30T19-00-00Z"),
        ("other", 1, "2026-11-30T17-00-00Z"),
    ]


def test_list_spec_shows_each_run_newest_first(tmp_path):
    project = make_project(tmp_path)
    previous = os.getcwd()
    os.chdir(project)
    try:
        save_run(
            run(
                [task("Writes a commit", [P])],
                run_id="2026-11-30T19-30-00Z",
                skills=[snapshot("my-skill", ablated=True)],
                ablated=["my-skill"],
                partial=True,
            ),
            spec_path=project / "demo.eval.yaml",
        )
    finally:
        os.chdir(previous)
    out = caliper("list", "demo.eval.yaml", cwd=project)
    assert out.returncode == 0, out.stderr
    rows = [line for line in out.stdout.splitlines() if "2026-11-30T" in line]
    assert [r.split()[1] for r in rows] == [
        "2026-11-30T19-30-00Z",
        "2026-11-30T19-00-00Z",
        "2026-11-30T18-01-33Z",
    ]
    assert "my-skill" in rows[0] and "partial" in rows[0]
    header = next(line for line in out.stdout.splitlines() if "Run id" in line)
    assert header.replace("┃", " ").split()[-1] == "Status"  # the column with "partial"
    assert header.index("Status") <= rows[0].index("partial")
    assert "claude-code:claude-sonnet-5" in rows[1]
    assert "100.0%" in rows[1] and "66.7%" in rows[2]
    data = json.loads(caliper("list", "demo", "--format", "json", cwd=project).stdout)
    assert data[0]["ablated"] == ["my-skill"] and data[0]["partial"] is True
    assert data[1]["engine"] == "claude-code:claude-sonnet-5"
    assert data[1]["k"] == 3
    assert data[2]["score"] == (1 / 3 + 1) / 2


def test_list_marks_an_unreadable_run_without_failing(tmp_path):
    project = make_project(tmp_path)
    (project / ".caliper/results/other/2026-11-30T23-00-00Z.json").write_text("nope")
    out = caliper("list", "other", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "not a readable caliper results file" in out.stdout


def test_list_unknown_spec_is_a_usage_error(tmp_path):
    project = make_project(tmp_path)
    out = caliper("list", "nope", cwd=project)
    assert out.returncode == 2
    assert "No saved runs for spec 'nope'" in out.stderr
    assert "demo, other" in out.stderr


def test_list_with_nothing_saved(tmp_path):
    out = caliper("list", cwd=tmp_path)
    assert out.returncode == 0
    assert "No .caliper/ directory at or above" in out.stdout
    assert caliper("list", "--format", "json", cwd=tmp_path).stdout.strip() == "[]"


def test_list_help_documents_exit_codes(tmp_path):
    out = caliper("list", "--help", cwd=tmp_path)
    assert "Exit codes" in out.stdout and "ablated" in out.stdout


def test_list_shows_each_score_with_its_interval(tmp_path):
    """No bare score, and no misleading interval: the one run of `other` is 0 of 1, too few
    attempts for any interval to say something (Wilson's [0 %, 79.3 %] would exclude every
    rate above 79 %), so the row says so and the JSON holds the whole [0, 1]."""
    project = make_project(tmp_path)
    out = caliper("list", "other", cwd=project)
    assert out.returncode == 0, out.stderr
    row = next(line for line in out.stdout.splitlines() if "2026-11-30T17" in line)
    assert "0.0% (uninformative)" in row
    assert "79.3" not in row
    data = json.loads(caliper("list", "other", "--format", "json", cwd=project).stdout)
    bounds = data[0]["score_interval"]
    assert (bounds["low"], bounds["high"]) == (0.0, 1.0)
    assert bounds["level"] == 0.95 and bounds["method"] == "uninformative"


def test_list_intervals_are_the_ones_report_shows(tmp_path):
    project = make_project(tmp_path)
    rows = json.loads(caliper("list", "demo", "--format", "json", cwd=project).stdout)
    listed = caliper("list", "demo", cwd=project).stdout
    for row in rows:
        shown = json.loads(caliper("report", row["path"], "--format", "json", cwd=project).stdout)
        assert row["score_interval"] == shown["scores"]["score_interval"]
        text = caliper("report", row["path"], cwd=project).stdout
        score_line = next(line for line in text.splitlines() if line.startswith(" Score"))
        bounds = score_line.split()[2]  # " Score  66.7% [20.8–93.9]  ████"
        assert bounds.startswith("[") and bounds in listed


LIST_LEAVES_OUT = (
    "caliper.results.models",  # the results schema: the summaries are plain JSON
    "caliper.results.scoring",
    "caliper.results.stats",
    "caliper.results.codec",
    "caliper.spec.model",
    "caliper.plugin",
    "caliper.report.run_view",
    "cattrs",
    "yaml",
    "statistics",
)
"""What ``caliper list SPEC`` does not import when every run has its saved summary: reading a
summary needs none of the machinery that decodes and scores a run."""


def test_list_of_summarised_runs_imports_no_results_machinery(tmp_path):
    """The real console script, run as ``__main__``, lists every module it had imported when
    it exited; with the runs' summaries saved (``save_run`` writes them), none of those that
    only decoding and scoring a run needs is among them."""
    project = make_project(tmp_path)
    assert list(project.glob(".caliper/results/demo/.*.summary")), "save_run wrote none"
    code = (
        "import atexit, runpy, sys\n"
        "atexit.register(lambda: print('MODULES', *sorted(sys.modules), file=sys.stderr))\n"
        "sys.argv = [sys.argv[1], 'list', 'demo']\n"
        "runpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(CALIPER)],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "2026-11-30T19-00-00Z" in done.stdout  # the runs were listed, with their scores
    assert "%" in done.stdout
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    imported = set(line.split()[1:])
    assert {"caliper.results.run_summary", "caliper.report.list_view"} <= imported
    heavy = sorted(
        m for m in imported if any(m == x or m.startswith(x + ".") for x in LIST_LEAVES_OUT)
    )
    assert heavy == []
