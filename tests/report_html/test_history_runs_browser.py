"""The page over a spec's runs (``caliper report SPEC --format html`` and ``caliper history
--format html``) in Chromium: a run picker showing the chosen run's tasks, a row per task
with its score per run, derived runs with their parent and baseline pairs as one pair."""

from __future__ import annotations

import re
import resource

import pytest
from html_support import PAYLOAD, F, P, caliper, page_text, run, save, task
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

FIRST = "2026-11-27T10-00-00Z"
REGRADE = "2026-11-28T10-00-00Z"
CONTROL = "2026-11-29T10-00-00Z"
FULL = "2026-11-29T10-00-01Z"
PAIR = "pair-7f3a"


def _tasks(commit, plain):
    return [task("Writes a commit", commit), task(PAYLOAD, plain)]


@pytest.fixture
def project(tmp_path):
    """Four runs of ``demo``: a first run, its regrade and a baseline pair (control, full)."""
    results = tmp_path / ".caliper" / "results" / "demo"
    save(run(_tasks([F, F, F, F], [P, P, P, P]), run_id=FIRST), results)
    save(
        run(
            _tasks([P, F, F, F], [P, P, P, F]),
            run_id=REGRADE,
            parent_run=f"demo/{FIRST}",
            derived_by="regrade",
        ),
        results,
    )
    for run_id, arm, commit in ((CONTROL, "control", [F, F, P, F]), (FULL, "full", [P] * 4)):
        baseline = {"id": PAIR, "arm": arm, "left_out": ["git-commit"], "engine": ""}
        save(run(_tasks(commit, [P, F, F, F]), run_id=run_id, baseline=baseline), results)
    (tmp_path / "demo.eval.yaml").write_text("tasks: []\n")
    return tmp_path


def _with_cpu(command):
    """``command()``'s result and the CPU seconds (user+sys) of the processes it ran and
    waited for: a loaded machine stretches wall time, not this (benchmarks/report_pages.py
    measures the wall time)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = command()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return result, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _without_nonce(page) -> str:
    """The page's text without its script nonce, which differs on every render."""
    return re.sub(r"nonce[-=]['\"]?[\w+/=-]+", "", page.read_text(encoding="utf-8"))


def test_report_of_a_spec_is_the_history_page(project):
    by_report = project / "a" / "demo.html"
    by_history = project / "b" / "demo.html"
    done, cpu = _with_cpu(
        lambda: caliper("report", "demo", "--format", "html", "-o", str(by_report), cwd=project)
    )
    assert cpu <= 3, f"the page took {cpu:.2f} s of CPU (over 3 s) to write"
    assert done.returncode == 0, done.stderr
    assert "4 run report(s)" in done.stderr
    done = caliper(
        "history", "demo.eval.yaml", "--format", "html", "-o", str(by_history), cwd=project
    )
    assert done.returncode == 0, done.stderr
    assert 'id="run-select"' in by_report.read_text(encoding="utf-8")
    assert _without_nonce(by_report) == _without_nonce(by_history)  # the same page
    # one run named by its id still gets the run page
    single = project / "one.html"
    done = caliper("report", f"demo/{FIRST}", "--format", "html", "-o", str(single), cwd=project)
    assert done.returncode == 0, done.stderr
    assert 'id="run-select"' not in single.read_text(encoding="utf-8")


def test_runs_can_be_switched_and_tasks_followed_over_runs(project, browser):
    page = project / "site" / "demo.html"
    done = caliper("report", "demo", "--format", "html", "-o", str(page), cwd=project)
    assert done.returncode == 0, done.stderr
    text = page_text(page.read_text(encoding="utf-8"))
    assert str(project) not in text and "http://" not in text and "https://" not in text
    assert browser.open(page) <= 1.0, "the page took over 1 s to load"
    driver = browser.driver
    assert browser.alert_text() is None and browser.console_errors() == []

    shown = [d for d in driver.find_elements(By.CSS_SELECTOR, ".run-detail") if d.is_displayed()]
    assert [d.get_attribute("data-run") for d in shown] == [FULL]  # the newest run first
    cells = [c.text for c in shown[0].find_elements(By.CSS_SELECTOR, "tbody tr td")]
    assert cells[:4] == ["Writes a commit", "PASS", "4/4", cells[3]] and cells[3].startswith(
        "100.0%"
    )
    assert cells[5] == PAYLOAD  # hostile task name shown literally

    Select(driver.find_element(By.ID, "run-select")).select_by_visible_text(
        f"{REGRADE} · claude-code:claude-sonnet-5 · 50.0%"
    )
    shown = [d for d in driver.find_elements(By.CSS_SELECTOR, ".run-detail") if d.is_displayed()]
    assert [d.get_attribute("data-run") for d in shown] == [REGRADE]
    assert f"regrade of {FIRST}" in shown[0].text and f"parent: demo/{FIRST}" in shown[0].text
    rows = shown[0].find_elements(By.CSS_SELECTOR, "tbody tr")
    assert rows[0].find_elements(By.TAG_NAME, "td")[2].text == "1/4"

    # a click on a row of the runs table picks that run
    driver.find_element(By.CSS_SELECTOR, f'#runs tr[data-run="{CONTROL}"] td:nth-child(2)').click()
    shown = [d for d in driver.find_elements(By.CSS_SELECTOR, ".run-detail") if d.is_displayed()]
    assert [d.get_attribute("data-run") for d in shown] == [CONTROL]
    assert f"baseline {PAIR}: control" in shown[0].text

    history = driver.find_element(By.ID, "task-history")
    heads = [h.text for h in history.find_elements(By.CSS_SELECTOR, "thead th")]
    assert heads == ["task", "trend", FIRST, REGRADE, CONTROL, FULL]
    commit = [
        c.text
        for c in history.find_elements(By.CSS_SELECTOR, "tbody tr")[0].find_elements(
            By.TAG_NAME, "td"
        )
    ]
    # 0/4, 1/4, 1/4, 4/4 → 0 %, 25 %, 25 %, 100 %; round(rate * 7) picks the block
    assert commit == ["Writes a commit", "▁▃▃█", "0.0%", "25.0%", "25.0%", "100.0%"]
    plain = history.find_elements(By.CSS_SELECTOR, "tbody tr")[1].find_elements(By.TAG_NAME, "td")
    assert plain[0].text == PAYLOAD and [c.text for c in plain[2:]] == [
        "100.0%",
        "75.0%",
        "25.0%",
        "25.0%",
    ]

    pair = driver.find_element(By.CSS_SELECTOR, "#pairs tbody tr")
    assert pair.get_attribute("data-pair") == PAIR
    assert CONTROL in pair.find_element(By.CSS_SELECTOR, ".arm-control").text
    assert FULL in pair.find_element(By.CSS_SELECTOR, ".arm-full").text
    tags = [t.text for t in driver.find_elements(By.CSS_SELECTOR, "#runs .tag.baseline")]
    assert sorted(tags) == [f"baseline {PAIR}: control", f"baseline {PAIR}: full"]
    assert browser.console_errors() == [] and browser.alert_text() is None
    print(f"screenshot: {browser.screenshot('history-runs-page')}")


def test_ten_runs_page_is_fast(tmp_path, browser):
    results = tmp_path / ".caliper" / "results" / "demo"
    for day in range(10):
        tasks = [task(f"task {i}", [P, F, P, P]) for i in range(20)]
        save(run(tasks, run_id=f"2026-11-{day + 10}T10-00-00Z"), results)
    page = tmp_path / "h.html"
    done, cpu = _with_cpu(
        lambda: caliper("history", "demo", "--format", "html", "-o", str(page), cwd=tmp_path)
    )
    assert done.returncode == 0, done.stderr
    assert cpu <= 3, f"a 10-run history page took {cpu:.2f} s of CPU (over 3 s) to write"
    assert browser.open(page) <= 1.0, "a 10-run history page took over 1 s to load"
    assert len(browser.driver.find_elements(By.CSS_SELECTOR, "#task-history tbody tr")) == 20
