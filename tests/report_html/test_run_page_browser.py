"""The run page in headless Chromium: what a person sees and can do on it."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from html_support import caliper, demo_run, save, transcript
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from caliper.plugin.attempt import Turn
from caliper.results.scoring import score_run

LONG = "x" * 4000 + "END-OF-LONG-OUTPUT"


@pytest.fixture(scope="module")
def page(tmp_path_factory, browser):
    """The demo run saved, rendered by the real ``caliper report --format html -o``, opened."""
    folder = tmp_path_factory.mktemp("runpage")
    results = demo_run()
    results.tasks[2].attempts[0].transcript = transcript(None, output=LONG)
    results.tasks[2].attempts[0].transcript.insert(0, Turn("user", "Please answer."))
    path = save(results, folder / ".caliper" / "results" / "demo")
    out = folder / "report.html"
    done = caliper("report", str(path), "--format", "html", "-o", str(out), cwd=folder)
    assert done.returncode == 0, done.stderr
    assert f"Wrote {out}" in done.stderr
    browser.open(out)
    browser.console_errors()  # start the log afresh for the tests below
    return browser


def text(browser, css: str) -> str:
    return browser.driver.find_element(By.CSS_SELECTOR, css).text


def visible_rows(browser) -> list[str]:
    rows = browser.driver.find_elements(By.CSS_SELECTOR, "#tasks tr.task-row")
    return [r.find_element(By.CSS_SELECTOR, "td.name").text for r in rows if r.is_displayed()]


def test_summary_shows_the_numbers(page):
    # task scores 2/3, 2/2 (the infra error is not counted) and 0/3: mean 55.6 %
    assert text(page, "#score") == "55.6%"
    # the run's interval is the one the scoring API derives (its maths is tested there)
    interval = score_run(demo_run()).score_interval
    shown = f"[{interval.low * 100:.1f}–{interval.high * 100:.1f}%]"
    assert text(page, "#score-interval") == shown
    # a task's interval is the continuity-corrected Wilson: 2 of 3 at 95 % is 0.1253 to
    # 0.9823 (R's prop.test(2, 3))
    row = page.driver.find_element(By.CSS_SELECTOR, '#tasks tr[data-name="Writes a commit"]')
    assert "[12.5–98.2%]" in row.text
    # activation 2/3 and 1/2 (one attempt not observed): mean 58.3 %
    assert text(page, "#activation") == "58.3%"
    # 8 counted attempts of 1000 in + 200 cache read + 50 cache write, 100 out
    assert text(page, "#tokens-in") == "10K" and text(page, "#tokens-out") == "800"
    assert text(page, "#unusable") == "1 attempt(s)"
    assert text(page, "#engine") == "claude-code:claude-sonnet-5"
    page.driver.find_element(By.CSS_SELECTOR, "#run-details summary").click()
    hood = text(page, "#neighbourhood")
    digest = hashlib.sha256(b"git-commit").hexdigest()
    assert "git-commit" in hood and digest[:12] in hood and "other-skill" in hood
    code = page.driver.find_element(By.CSS_SELECTOR, "#neighbourhood tbody tr code[title]")
    assert code.get_attribute("title") == digest


def test_clicking_an_attempt_shows_its_tool_calls_and_verdicts(page):
    page.driver.find_element(By.CSS_SELECTOR, 'button.att[data-id="t0-a1"]').click()
    viewer = page.driver.find_element(By.ID, "viewer")
    assert viewer.is_displayed()
    assert text(page, "#viewer-title") == "Writes a commit — attempt 2"
    tool = viewer.find_element(By.CSS_SELECTOR, ".turn.tool details")
    assert tool.find_element(By.TAG_NAME, "summary").text.startswith("Bash")
    tool_input = tool.find_element(By.CSS_SELECTOR, "pre.tool-input")
    assert not tool_input.is_displayed()  # collapsed until clicked
    tool.find_element(By.TAG_NAME, "summary").click()
    assert "printf 'OUT-%s' 42" in tool_input.text
    assert tool.find_element(By.CSS_SELECTOR, "pre.tool-output").text == "OUT-42"
    check = viewer.find_element(By.CSS_SELECTOR, '.check[data-key="expect"]')
    assert "failed" in check.text and "(judge claude-code:judge-1)" in check.text
    assert check.find_element(By.CSS_SELECTOR, "pre.judge-reasoning").text == "Says 41, not 42."
    assert viewer.find_element(By.CSS_SELECTOR, ".final-answer").text == "Done."
    assert "1000 in, 100 out" in viewer.text and "6.0s" in viewer.text
    roles = [t.get_attribute("class") for t in viewer.find_elements(By.CSS_SELECTOR, ".turn")]
    assert roles == ["turn assistant", "turn tool", "turn assistant"]
    assert page.console_errors() == []


def test_skill_loads_are_highlighted(page):
    page.driver.find_element(By.CSS_SELECTOR, 'button.att[data-id="t0-a0"]').click()
    loads = page.driver.find_elements(By.CSS_SELECTOR, "#viewer .turn.skill-load")
    assert len(loads) == 1 and "skill load" in loads[0].text
    assert "Skill" in loads[0].text


def test_long_output_is_cut_with_show_all(page):
    page.driver.find_element(By.CSS_SELECTOR, 'button.att[data-id="t2-a0"]').click()
    tool = page.driver.find_element(By.CSS_SELECTOR, "#viewer .turn.tool details")
    tool.find_element(By.TAG_NAME, "summary").click()
    output = tool.find_element(By.CSS_SELECTOR, "pre.tool-output")
    assert "END-OF-LONG-OUTPUT" not in output.text and len(output.text) < 2100
    tool.find_element(By.CSS_SELECTOR, "button.show-all").click()
    assert output.text.endswith("END-OF-LONG-OUTPUT")
    assert page.console_errors() == []


def test_filters_narrow_the_attempts(page):
    driver = page.driver
    outcome = Select(driver.find_element(By.ID, "f-outcome"))
    skill = Select(driver.find_element(By.ID, "f-skill"))
    search = driver.find_element(By.ID, "f-task")
    outcome.select_by_value("task_fail")
    assert text(page, "#f-count") == "4 of 9 attempts"
    assert visible_rows(page) == ["Writes a commit", "Plain answer"]
    shown = [b for b in driver.find_elements(By.CSS_SELECTOR, "button.att") if b.is_displayed()]
    assert {b.get_attribute("data-outcome") for b in shown} == {"task_fail"}
    outcome.select_by_value("")
    skill.select_by_value("git-commit")
    assert text(page, "#f-count") == "3 of 9 attempts"
    assert visible_rows(page) == ["Writes a commit", "Config file"]
    skill.select_by_value("")
    search.send_keys("config")
    assert visible_rows(page) == ["Config file"]
    search.clear()
    search.send_keys("no such task")
    assert visible_rows(page) == [] and driver.find_element(By.ID, "no-match").is_displayed()
    driver.execute_script(
        "const f=document.getElementById('f-task'); f.value='';f.dispatchEvent(new Event('input'));"
    )
    assert len(visible_rows(page)) == 3


def test_sorting_by_score_both_ways(page):
    head = page.driver.find_element(By.CSS_SELECTOR, '#tasks th[data-sort="score"]')
    head.click()
    assert visible_rows(page) == ["Plain answer", "Writes a commit", "Config file"]
    head.click()
    assert visible_rows(page) == ["Config file", "Writes a commit", "Plain answer"]
    page.driver.find_element(By.CSS_SELECTOR, '#tasks th[data-sort="name"]').click()
    assert visible_rows(page) == ["Config file", "Plain answer", "Writes a commit"]


def test_scoreboard_and_confusion(page):
    board = page.driver.find_element(By.CSS_SELECTOR, '#scoreboard tr[data-skill="git-commit"]')
    cells = [c.text for c in board.find_elements(By.TAG_NAME, "td")]
    # expected 3 (task 1), fired 3 (2 hits + 1 false alarm in task 2), hits 2
    assert cells[1:4] == ["3", "3", "2"]
    assert cells[4].startswith("66.7%") and cells[5].startswith("66.7%")
    confusion = page.driver.find_element(By.ID, "confusion")
    rows = confusion.find_elements(By.CSS_SELECTOR, "tbody tr")
    first = rows[0].find_elements(By.CSS_SELECTOR, "td.cell")
    assert first[0].text == "★ 2/3" and "miss" in first[0].get_attribute("class")
    second = rows[1].find_elements(By.CSS_SELECTOR, "td.cell")
    assert second[0].text == "1/2" and "false-alarm" in second[0].get_attribute("class")


def test_screenshot_and_no_console_errors(page):
    page.driver.find_element(By.CSS_SELECTOR, 'button.att[data-id="t0-a0"]').click()
    shot = page.screenshot("run-page")
    print(f"screenshot: {shot}")
    assert shot.stat().st_size > 10_000
    assert page.console_errors() == []


def test_page_is_self_contained(tmp_path):
    """No URL to fetch anything from: no src/href to http(s), no @import, no CDN."""
    results = demo_run()
    path = save(results, tmp_path)
    out = tmp_path / "r.html"
    assert (
        caliper("report", str(path), "--format", "html", "-o", str(out), cwd=tmp_path).returncode
        == 0
    )
    html = out.read_text()
    for needle in ("http://", "https://", "@import", 'src="//', '<link rel="stylesheet"'):
        assert needle not in html, needle
    assert Path(out).stat().st_size < 200_000
