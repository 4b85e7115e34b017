"""``caliper history``: text with sparklines, json, and the html page checked in Chromium."""

from __future__ import annotations

import json

import pytest
from html_support import F, P, caliper, run, save, task
from selenium.webdriver.common.by import By


def _run(run_id: str, outcomes, **meta):
    return run(
        [
            task(
                "Writes a commit",
                outcomes,
                expected=["git-commit"],
                activated=[["git-commit"] if o is P else [] for o in outcomes],
            )
        ],
        run_id=run_id,
        **meta,
    )


@pytest.fixture
def project(tmp_path):
    """Four runs of ``demo`` (codex, claude ablated, claude twice) and one broken file."""
    results = tmp_path / ".caliper" / "results" / "demo"
    save(_run("2026-11-27T10-00-00Z", [F, F, F, F], backend="codex", model="gpt-9"), results)
    save(_run("2026-11-28T10-00-00Z", [P, F, F, F], ablated=["git-commit"]), results)
    save(_run("2026-11-29T10-00-00Z", [P, P, F, F]), results)
    save(_run("2026-11-30T10-00-00Z", [P, P, P, P]), results)
    (results / "2026-11-30T11-00-00Z.json").write_text("{broken", encoding="utf-8")
    (tmp_path / "demo.eval.yaml").write_text("tasks: []\n")
    return tmp_path


def test_text_has_a_sparkline_and_a_row_per_run(project):
    done = caliper("history", "demo", cwd=project)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "demo: 5 saved run(s), oldest first"
    # 0 %, 25 %, 50 %, 100 % on eight levels: ▁ ▃ ▅ █ (round(rate * 7) picks the block)
    assert lines[1].split() == ["score", "▁▃▅█"]
    body = [x for x in lines if x.startswith("2026-")]
    assert [x.split()[0] for x in body] == [
        "2026-11-27T10-00-00Z",
        "2026-11-28T10-00-00Z",
        "2026-11-29T10-00-00Z",
        "2026-11-30T10-00-00Z",
        "2026-11-30T11-00-00Z",
    ]
    assert "codex:gpt-9" in body[0] and "0.0%" in body[0]
    assert body[1].endswith("without git-commit")
    assert "unreadable" in body[4]


def test_json_rows_in_time_order_and_spec_file_accepted(project):
    done = caliper("history", "demo.eval.yaml", "--format", "json", cwd=project)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r.get("score") for r in rows] == [0.0, 0.25, 0.5, 1.0, None]
    assert rows[1]["ablated"] == ["git-commit"] and rows[0]["engine"] == "codex:gpt-9"
    assert rows[2]["score_interval"]["method"] == "wilson-cc"  # the interval rates are shown with
    assert "error" in rows[4]


def test_unknown_spec_is_a_usage_error(project):
    done = caliper("history", "nope", cwd=project)
    assert done.returncode == 2
    assert "No saved runs for spec 'nope'" in done.stderr and "demo" in done.stderr
    assert "Traceback" not in done.stderr


def test_help_has_examples_and_exit_codes(project):
    done = caliper("history", "--help", cwd=project)
    assert done.returncode == 0
    assert "Examples:" in done.stdout and "Exit codes:" in done.stdout
    top = caliper("--help", cwd=project)
    assert "history" in top.stdout


def test_html_charts_link_to_each_runs_report(project, browser):
    out = project / "site" / "history.html"
    done = caliper("history", "demo", "--format", "html", "-o", str(out), cwd=project)
    assert done.returncode == 0, done.stderr
    assert "4 run report(s)" in done.stderr
    pages = sorted(p.name for p in (project / "site" / "history.runs").iterdir())
    assert pages == [f"2026-11-{d}T10-00-00Z.html" for d in (27, 28, 29, 30)]
    browser.open(out)
    driver = browser.driver
    score = driver.find_element(By.CSS_SELECTOR, "#score-section svg.chart")
    dots = score.find_elements(By.CSS_SELECTOR, "circle.dot")
    assert len(dots) == 4
    assert [d.get_attribute("fill") for d in dots][1] == "#ffffff"  # the ablated run: hollow
    assert dots[0].get_attribute("stroke") != dots[2].get_attribute("stroke")  # engines differ
    cy = [float(d.get_attribute("cy")) for d in dots]
    assert cy[0] > cy[1] > cy[2] > cy[3]  # rising score: higher on the page
    assert score.find_elements(By.CSS_SELECTOR, "path.band")  # the intervals as a band
    assert driver.find_elements(By.CSS_SELECTOR, "#activation-section circle.dot")
    rows = driver.find_elements(By.CSS_SELECTOR, "#runs tbody tr")
    assert "unreadable" in rows[0].text  # newest first: the broken file is the newest
    assert rows[1].get_attribute("data-run") == "2026-11-30T10-00-00Z"
    assert rows[-1].get_attribute("data-run") == "2026-11-27T10-00-00Z"
    matrix = driver.find_element(By.ID, "matrix")
    heads = [h.text.splitlines()[0] for h in matrix.find_elements(By.CSS_SELECTOR, "thead th")]
    assert heads == [
        "task",
        "codex:gpt-9",
        "claude-code:claude-sonnet-5 without git-commit",
        "claude-code:claude-sonnet-5",
    ]
    assert browser.console_errors() == []
    print(f"screenshot: {browser.screenshot('history-page')}")
    links = score.find_elements(By.CSS_SELECTOR, "a.run-link")
    assert links[3].get_dom_attribute("href") == "history.runs/2026-11-30T10-00-00Z.html"
    assert links[3].get_dom_attribute("href").endswith("history.runs/2026-11-30T10-00-00Z.html")
    driver.execute_script(
        "arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))",
        links[3].find_element(By.CSS_SELECTOR, "circle"),
    )
    assert driver.find_element(By.ID, "run-id").text == "2026-11-30T10-00-00Z"
    assert driver.find_element(By.ID, "score").text == "100.0%"
    assert browser.console_errors() == []
