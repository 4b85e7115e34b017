"""Runs made by ``regrade``, ``retry`` and ``merge`` (and resumed runs) say so, with their
parent, in every view: ``list``, ``history``, ``report`` (text, markdown, html) and ``compare``,
through the real ``caliper`` script on hand-made runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_results_support import F, P, caliper, run, task

from caliper.results import codec
from caliper.results.codec import dumps

PARENT = "2026-12-01T10-00-00Z"
REGRADE = "2026-12-01T11-00-00Z"
RETRY = "2026-12-01T12-00-00Z"
MERGED = "2026-12-01T13-00-00Z"
RESUMED = "2026-12-01T14-00-00Z"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / ".caliper" / "results" / "demo"
    folder.mkdir(parents=True)
    runs = [
        run([task("x", [P] * 9 + [F])], run_id=PARENT, k=10),
        run(
            [task("x", [P] * 7 + [F] * 3)],
            run_id=REGRADE,
            k=10,
            parent_run=f"demo/{PARENT}",
            derived_by="regrade",
            changes=["judges re-run on 10 attempt(s) with the spec's current checks"],
        ),
        run(
            [task("x", [P] * 10)],
            run_id=RETRY,
            k=10,
            parent_run=f"demo/{PARENT}",
            derived_by="retry",
            changes=["1 attempt(s) tried again"],
        ),
        run(
            [task("x", [P] * 10)],
            run_id=RESUMED,
            k=10,
            resumed_at=["2026-12-01T14-30-00+00:00"],
        ),
    ]
    for results in runs:
        (folder / f"{results.meta.run_id}.json").write_text(dumps(results), encoding="utf-8")
    # a merged run saved before derived_by existed: known by merged_from alone
    merged = codec.to_data(run([task("x", [P] * 10)], run_id=MERGED, k=10))
    merged["meta"]["merged_from"] = [
        {"shard": "1/2", "run": "demo/2026-12-01T12-59-00Z"},
        {"shard": "2/2", "run": "demo/2026-12-01T12-59-01Z"},
    ]
    merged["meta"].pop("derived_by", None)
    merged["meta"].pop("parent_run", None)
    (folder / f"{MERGED}.json").write_text(json.dumps(merged), encoding="utf-8")
    return tmp_path


def test_list_and_history_label_derived_runs_with_their_parent(project: Path) -> None:
    text = caliper("list", "demo", cwd=project, env=_wide()).stdout
    rows = {line.split()[1]: line for line in text.splitlines() if line.startswith("│ 2026")}
    assert f"regrade of {PARENT}" in rows[REGRADE]
    assert f"retry of {PARENT}" in rows[RETRY]
    assert "merged (2 shards)" in rows[MERGED]
    assert "resumed" in rows[RESUMED]
    assert "of" not in rows[PARENT].split("│")[-2]
    data = {
        r["run_id"]: r
        for r in json.loads(caliper("list", "demo", "--format", "json", cwd=project).stdout)
    }
    assert (data[REGRADE]["derived_by"], data[REGRADE]["parent_run"]) == (
        "regrade",
        f"demo/{PARENT}",
    )
    assert data[RETRY]["derived_by"] == "retry"
    assert data[MERGED]["derived_by"] == "merge"
    assert data[RESUMED]["resumed"] == 1 and data[RESUMED]["derived_by"] is None
    assert data[PARENT]["derived_by"] is None and data[PARENT]["derived"] is None

    history = caliper("history", "demo", cwd=project, env=_wide()).stdout
    line = next(line for line in history.splitlines() if line.startswith(REGRADE))
    assert line.endswith(f"regrade of {PARENT}")
    rows = {
        r["run_id"]: r
        for r in json.loads(caliper("history", "demo", "--format", "json", cwd=project).stdout)
    }
    assert (
        rows[REGRADE]["derived_by"] == "regrade" and rows[REGRADE]["parent_run"] == f"demo/{PARENT}"
    )
    page = project / "history.html"
    done = caliper("history", "demo", "--format", "html", "-o", str(page), cwd=project)
    assert done.returncode == 0, done.stderr
    assert f"regrade of {PARENT}</span>" in page.read_text(encoding="utf-8")


def test_reports_and_compare_say_no_agent_ran(project: Path) -> None:
    report = caliper("report", f"demo/{REGRADE}", cwd=project, env=_wide()).stdout
    assert f"A regrade of demo/{PARENT} — no agent ran" in report
    assert "judges re-run on 10 attempt(s)" in report
    retry = caliper("report", f"demo/{RETRY}", cwd=project, env=_wide()).stdout
    assert f"A retry of demo/{PARENT} — only the parent's failed attempts were run again" in retry
    merged = caliper("report", f"demo/{MERGED}", cwd=project, env=_wide()).stdout
    assert "A merge of 2 shard runs (demo/2026-12-01T12-59-00Z" in merged
    resumed = caliper("report", f"demo/{RESUMED}", cwd=project, env=_wide()).stdout
    assert "Resumed once after a stop" in resumed
    ordinary = caliper("report", f"demo/{PARENT}", cwd=project, env=_wide()).stdout
    assert "no agent ran" not in ordinary and "Resumed" not in ordinary

    markdown = caliper("report", f"demo/{REGRADE}", "--format", "markdown", cwd=project).stdout
    assert "> **Derived run.** A regrade of demo/2026\\-12\\-01T10\\-00\\-00Z" in markdown
    page = project / "r.html"
    caliper("report", f"demo/{REGRADE}", "--format", "html", "-o", str(page), cwd=project)
    html = page.read_text(encoding="utf-8")
    assert 'id="derived"' in html and f"A regrade of demo/{PARENT} — no agent ran" in html

    compared = caliper("compare", f"demo/{PARENT}", f"demo/{REGRADE}", cwd=project, env=_wide())
    assert f"after ({REGRADE}): A regrade of demo/{PARENT} — no agent ran" in compared.stdout


def _wide() -> dict[str, str]:
    import os

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["COLUMNS"] = "200"
    return env
