"""``caliper review RUN OVERRIDES``: a person's verdicts saved as a derived run."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from html_support import PAYLOAD, caliper, demo_run, save
from selenium.webdriver.common.by import By

from caliper.results.scoring import score_run
from caliper.results.store import load_run


@pytest.fixture
def saved(tmp_path) -> Path:
    return save(demo_run(), tmp_path / ".caliper" / "results" / "demo")


def overrides(tmp_path: Path, items: list, reviewer: str | None = "ana") -> Path:
    path = tmp_path / "overrides.json"
    doc: dict = {"overrides": items}
    if reviewer is not None:
        doc["reviewer"] = reviewer
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_review_saves_a_derived_run_and_leaves_the_parent(saved, tmp_path):
    before = saved.read_bytes()
    items = [
        {"task": "Plain answer", "attempt": 1, "verdict": "pass", "note": "41 is right " + PAYLOAD},
        {"task": "Writes a commit", "attempt": 1, "verdict": "fail", "note": "wrong file"},
    ]
    done = caliper("review", str(saved), str(overrides(tmp_path, items)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert saved.read_bytes() == before  # the parent is untouched
    files = sorted(p for p in saved.parent.glob("*.json") if p != saved)
    assert len(files) == 1
    child = load_run(files[0])
    meta = child.meta
    assert meta.derived_by == "review" and meta.parent_run == "demo/2026-11-30T18-01-33Z"
    assert meta.changes[0].startswith("verdicts of 2 attempt(s) set by ana at ")
    plain = child.tasks[2].attempts[0]
    assert plain.outcome.value == "pass"
    assert plain.checks[-1].key == "review" and plain.checks[-1].passed is True
    assert child.tasks[0].attempts[0].outcome.value == "task_fail"
    # task scores by hand: Writes a commit 1/3 (was 2/3), Config file 2/2, Plain answer 1/3
    scores = [t.score for t in score_run(child).tasks]
    assert scores == pytest.approx([1 / 3, 1.0, 1 / 3])
    report = caliper("report", str(files[0]), cwd=tmp_path)
    assert report.returncode == 0 and "A review of demo/2026-11-30T18-01-33Z" in report.stdout


def test_bad_overrides_are_one_message(saved, tmp_path):
    bad = [{"task": "Plain answer", "attempt": 9, "verdict": "pass", "note": "x"}]
    done = caliper("review", str(saved), str(overrides(tmp_path, bad)), cwd=tmp_path)
    assert done.returncode == 2 and "has no attempt 9 of task 'Plain answer'" in done.stderr
    no_note = [{"task": "Plain answer", "attempt": 1, "verdict": "pass", "note": " "}]
    done = caliper("review", str(saved), str(overrides(tmp_path, no_note)), cwd=tmp_path)
    assert done.returncode == 2 and "needs task" in done.stderr
    good = [{"task": "Plain answer", "attempt": 1, "verdict": "pass", "note": "ok"}]
    path = overrides(tmp_path, good, reviewer=None)
    done = caliper("review", str(saved), str(path), cwd=tmp_path)
    assert done.returncode == 2 and "names no reviewer" in done.stderr
    (tmp_path / "junk.json").write_text("{not json", encoding="utf-8")
    done = caliper("review", str(saved), str(tmp_path / "junk.json"), cwd=tmp_path)
    assert done.returncode == 2 and "is not a JSON overrides file" in done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(saved.parent.glob("*.json")) == [saved]  # nothing saved on bad input


def test_page_overrides_export_and_review_round_trip(saved, tmp_path, browser):
    page = tmp_path / "report.html"
    done = caliper("report", str(saved), "--format", "html", "-o", str(page), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser.open(page)
    driver = browser.driver
    driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
    )
    driver.find_element(By.CSS_SELECTOR, 'button.att[data-id="t2-a0"]').click()
    viewer = driver.find_element(By.ID, "viewer")
    viewer.find_element(By.CSS_SELECTOR, "button.review-set").click()
    assert viewer.find_element(By.CSS_SELECTOR, ".review-status").text == "a note is required"
    viewer.find_element(By.CSS_SELECTOR, "textarea.review-note").send_keys("41 is fine " + PAYLOAD)
    viewer.find_element(By.CSS_SELECTOR, "button.review-set").click()
    assert driver.find_element(By.ID, "review-count").text == "1 override(s)"
    browser.screenshot("run-review")
    driver.find_element(By.ID, "viewer-close").click()  # the viewer covers the review bar
    driver.find_element(By.ID, "review-name").send_keys("ana")
    driver.find_element(By.ID, "review-export").click()
    target = downloads / "demo-2026-11-30T18-01-33Z.overrides.json"
    for _ in range(50):
        if target.exists():
            break
        time.sleep(0.1)
    doc = json.loads(target.read_text(encoding="utf-8"))
    assert doc["reviewer"] == "ana" and doc["run"] == "demo/2026-11-30T18-01-33Z"
    assert doc["overrides"] == [
        {"task": "Plain answer", "attempt": 1, "verdict": "pass", "note": "41 is fine " + PAYLOAD}
    ]
    assert browser.alert_text() is None and browser.console_errors() == []
    # a reload keeps the override and the reviewer's name (the browser's local storage)
    driver.refresh()
    browser.wait_for_attempts()
    assert driver.find_element(By.ID, "review-count").text == "1 override(s)"
    assert driver.find_element(By.ID, "review-name").get_attribute("value") == "ana"
    driver.find_element(By.CSS_SELECTOR, 'button.att[data-id="t2-a0"]').click()
    viewer = driver.find_element(By.ID, "viewer")
    assert viewer.find_element(By.CSS_SELECTOR, ".review-status").text == "overridden: pass"
    viewer.find_element(By.CSS_SELECTOR, "button.review-clear").click()
    driver.refresh()
    assert driver.find_element(By.ID, "review-count").text == "0 override(s)"
    assert browser.console_errors() == []
    driver.execute_script("window.localStorage.clear()")
    done = caliper("review", str(saved), str(target), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    child = load_run(max(p for p in saved.parent.glob("*.json") if p != saved))
    assert child.tasks[2].attempts[0].outcome.value == "pass"
