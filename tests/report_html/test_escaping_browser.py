"""Text from agents and specs cannot run in the page: planted payloads show literally."""

from __future__ import annotations

import re

import pytest
from html_support import PAYLOAD, caliper, page_attempts, run, save, snapshot, task, transcript
from selenium.webdriver.common.by import By

from caliper.plugin.attempt import Turn
from caliper.results.models import Outcome


def planted_run():
    """Payloads in a task name, a skill description, the transcript, a tool's output, the
    final answer, a judge's reasoning and the spec name."""
    bad_task = task(
        f"Task {PAYLOAD}",
        [Outcome.TASK_FAIL, Outcome.PASS],
        expected=["bad-skill"],
        activated=[["bad-skill"], ["bad-skill"]],
    )
    record = bad_task.attempts[0]
    record.transcript = [
        Turn("assistant", f"thinking {PAYLOAD}"),
        *transcript("bad-skill", output=f"output {PAYLOAD}")[1:],
    ]
    record.final_answer = f"answer {PAYLOAD}"
    record.checks[0].reason = f"judge says {PAYLOAD}"
    record.reason = f"judge says {PAYLOAD}"
    return run(
        [bad_task],
        spec_name="planted",
        skills=[snapshot("bad-skill", description=f"Skill {PAYLOAD}")],
    )


@pytest.fixture(scope="module")
def planted_page(tmp_path_factory, browser):
    folder = tmp_path_factory.mktemp("planted")
    path = save(planted_run(), folder)
    out = folder / "planted.html"
    done = caliper("report", str(path), "--format", "html", "-o", str(out), cwd=folder)
    assert done.returncode == 0, done.stderr
    browser.open(out)
    return browser, out


def _assert_nothing_ran(browser, scripts=("application/gzip", "")) -> None:
    driver = browser.driver
    assert browser.alert_text() is None, "an alert was raised"
    assert driver.find_elements(By.CSS_SELECTOR, "img") == [], "an <img> was injected"
    # the only textarea is the viewer's review note (built by the page's own script)
    assert driver.find_elements(By.CSS_SELECTOR, "textarea:not(.review-note)") == []
    found = driver.find_elements(By.TAG_NAME, "script")
    assert [s.get_attribute("type") or "" for s in found] == list(scripts)
    assert browser.console_errors() == []


def test_payloads_do_not_run_and_show_literally(planted_page):
    browser, _out = planted_page
    driver = browser.driver
    _assert_nothing_ran(browser)
    name = driver.find_element(By.CSS_SELECTOR, "#tasks td.name").text
    assert name == f"Task {PAYLOAD}"
    assert "49" not in name  # {{ 7*7 }} was not evaluated by the template engine
    driver.find_element(By.CSS_SELECTOR, "#run-details summary").click()
    desc = driver.find_element(By.CSS_SELECTOR, "#neighbourhood td.desc").text
    assert desc == f"Skill {PAYLOAD}"

    driver.find_element(By.CSS_SELECTOR, 'button.att[data-id="t0-a0"]').click()
    viewer = driver.find_element(By.ID, "viewer")
    assert f"Task {PAYLOAD} — attempt 1" == driver.find_element(By.ID, "viewer-title").text
    texts = [p.text for p in viewer.find_elements(By.CSS_SELECTOR, "pre")]
    assert f"thinking {PAYLOAD}" in texts
    # the final answer is rendered as Markdown from text nodes: the payload shows literally
    assert viewer.find_element(By.CSS_SELECTOR, ".final-answer").text == f"answer {PAYLOAD}"
    assert f"judge says {PAYLOAD}" in texts
    for details in viewer.find_elements(By.CSS_SELECTOR, "details.tool"):
        details.find_element(By.TAG_NAME, "summary").click()
    outputs = [p.text for p in viewer.find_elements(By.CSS_SELECTOR, "pre.tool-output")]
    assert f"output {PAYLOAD}" in outputs
    _assert_nothing_ran(browser)
    shot = browser.screenshot("escaping")
    print(f"screenshot: {shot}")


def test_the_attempt_data_cannot_end_its_script_element(planted_page):
    _browser, out = planted_page
    html = out.read_text(encoding="utf-8")
    blob = re.search(
        r'<script type="application/gzip" id="attempt-data">(.*?)</script>', html, re.S
    ).group(1)
    # packed: base64 text, nothing the HTML parser reacts to, whatever the attempts say
    assert re.fullmatch(r"[A-Za-z0-9+/]*={0,2}", blob)
    assert "</script>" in page_attempts(html)["t0-a0"]["final_answer"]
    # only our own two script elements exist in the source
    assert html.count("<script") == 2 and html.count("</script>") == 2


def test_compare_and_history_pages_show_payloads_literally(tmp_path, browser):
    """Task names, engine names and skill names reach the compare page, the engine matrix
    and the history charts' tooltips: none of them runs."""
    folder = tmp_path / ".caliper" / "results" / "planted"
    before = planted_run()
    before.meta.run_id = "2026-11-29T10-00-00Z"
    before.meta.model = f"model {PAYLOAD}"
    before.meta.ablated = [f"skill {PAYLOAD}"]
    a = save(before, folder)
    b = save(planted_run(), folder)
    out = tmp_path / "compare.html"
    done = caliper("compare", str(a), str(b), "--format", "html", "-o", str(out), cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    browser.open(out)
    driver = browser.driver
    _assert_nothing_ran(browser)  # the compare page carries its attempts' data, as a run page
    # the planted answers and transcripts stay text in the viewer too
    driver.find_element(By.CSS_SELECTOR, "#compare-tasks button.att").click()
    _assert_nothing_ran(browser)
    assert driver.find_element(By.CSS_SELECTOR, "#compare-tasks td.name").text == (
        f"Task {PAYLOAD}"
    )
    assert f"model {PAYLOAD}" in driver.find_element(By.ID, "a-label").text
    assert f"Task {PAYLOAD}" in driver.find_element(By.ID, "matrix").text

    page = tmp_path / "history.html"
    done = caliper("history", "planted", "--format", "html", "-o", str(page), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    browser.open(page)
    _assert_nothing_ran(browser, scripts=[""])
    titles = driver.execute_script(
        "return Array.from(document.querySelectorAll('circle.dot title')).map(t => t.textContent)"
    )
    assert any(f"model {PAYLOAD}" in t for t in titles), titles
    assert f"Task {PAYLOAD}" in driver.find_element(By.ID, "matrix").text
