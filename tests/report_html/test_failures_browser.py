"""The run page's failures view, answer column, regex search and keyboard navigation, in
headless Chromium."""

from __future__ import annotations

import time

import pytest
from html_support import PAYLOAD, caliper, demo_run, save, transcript
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

from caliper.plugin.attempt import Turn
from caliper.results.models import Outcome

MARKDOWN = (
    "# Result <img src=x onerror=alert(1)>\n\nIt is **bold** and `<b>code</b>`.\n\n"
    "- one [click](javascript:alert(1))\n- two ![pic](https://example.com/x.png)\n\n"
    "```\n</script><script>alert(2)</script>\n```\n> quoted <i>text</i>"
)
"""An answer with every Markdown form the renderer knows, and markup hidden in each."""


@pytest.fixture(scope="module")
def page(tmp_path_factory, browser):
    """The demo run with distinctive answers and a tool input, rendered by the real CLI."""
    folder = tmp_path_factory.mktemp("failpage")
    results = demo_run()
    plain = results.tasks[2].attempts
    plain[0].final_answer = "The answer is **41** " + PAYLOAD
    plain[1].final_answer = "forty-one"
    plain[2].final_answer = MARKDOWN
    needle = Turn("tool", tool_name="Bash", tool_input={"command": "grep -r NEEDLE-77 ."})
    results.tasks[0].attempts[1].transcript = [*transcript(None), needle]
    # a timeout counted as a failure (the default policy)
    results.tasks[1].attempts[1].outcome = Outcome.TIMEOUT
    path = save(results, folder / ".caliper" / "results" / "demo")
    out = folder / "report.html"
    done = caliper("report", str(path), "--format", "html", "-o", str(out), cwd=folder)
    assert done.returncode == 0, done.stderr
    browser.open(out)
    browser.console_errors()
    return browser


def shown_ids(browser) -> list[str]:
    buttons = browser.driver.find_elements(By.CSS_SELECTOR, "#tasks button.att")
    return [b.get_attribute("data-id") for b in buttons if b.is_displayed()]


def set_search(browser, value: str) -> None:
    box = browser.driver.find_element(By.ID, "f-search")
    box.clear()
    if value:
        box.send_keys(value)
    else:
        browser.driver.execute_script("arguments[0].dispatchEvent(new Event('input'))", box)
    time.sleep(0.4)  # the search waits 150 ms after the last key


def test_failures_view_shows_failed_and_unusable(page):
    outcome = Select(page.driver.find_element(By.ID, "f-outcome"))
    outcome.select_by_value("-failures-")
    # failed: t0-a1, t2-a0..2 and the timeout t1-a1; unusable: the infra error t1-a2
    assert shown_ids(page) == ["t0-a1", "t1-a1", "t1-a2", "t2-a0", "t2-a1", "t2-a2"]
    outcome.select_by_value("-unusable-")
    assert shown_ids(page) == ["t1-a2"]
    outcome.select_by_value("-failed-")
    assert shown_ids(page) == ["t0-a1", "t1-a1", "t2-a0", "t2-a1", "t2-a2"]
    outcome.select_by_value("")
    assert len(shown_ids(page)) == 9


def test_answer_column_shows_the_first_failed_answer_inert(page):
    row = '#tasks tr[data-name="Plain answer"]'
    cell = page.driver.find_element(By.CSS_SELECTOR, f"{row} td.answer")
    # the text shows literally (cut at 120 characters), nothing of it ran or became markup
    assert cell.text.startswith("The answer is **41** <script>alert(1)</script>")
    assert cell.get_attribute("title") == "answer of attempt 1"
    assert cell.find_elements(By.CSS_SELECTOR, "*") == []
    assert page.alert_text() is None


def test_regex_search_over_answers_and_tool_inputs(page):
    set_search(page, r"forty-\w+")
    assert shown_ids(page) == ["t2-a1"]
    set_search(page, "needle-7[0-9]")  # a tool input, case-insensitive
    assert shown_ids(page) == ["t0-a1"]
    set_search(page, "OUT-42")  # a tool output: every default transcript has it
    assert len(shown_ids(page)) == 9
    set_search(page, "([unclosed")
    error = page.driver.find_element(By.ID, "f-search-error")
    assert error.is_displayed() and "not a regular expression" in error.text
    assert len(shown_ids(page)) == 9  # a bad pattern filters nothing
    set_search(page, "")
    assert not error.is_displayed()


def test_keys_move_between_shown_attempts_and_escape_clears_the_fragment(page):
    driver = page.driver
    Select(driver.find_element(By.ID, "f-outcome")).select_by_value("-failures-")
    body = driver.find_element(By.TAG_NAME, "body")
    body.click()
    body.send_keys("j")
    viewer = driver.find_element(By.ID, "viewer")
    assert viewer.get_attribute("data-attempt") == "t0-a1"
    assert driver.execute_script("return location.hash") == "#attempt=t0-a1"
    body.send_keys("j")
    body.send_keys(Keys.ARROW_DOWN)
    assert viewer.get_attribute("data-attempt") == "t1-a2"
    body.send_keys("k")
    assert viewer.get_attribute("data-attempt") == "t1-a1"
    page.screenshot("run-failures-view")
    body.send_keys(Keys.ESCAPE)
    assert not viewer.is_displayed()
    assert driver.execute_script("return location.hash") == ""
    Select(driver.find_element(By.ID, "f-outcome")).select_by_value("")
    # typing j in the search box searches, it does not move
    set_search(page, "j")
    assert viewer.get_attribute("hidden") is not None
    set_search(page, "")
    assert page.console_errors() == []


def test_answers_render_as_markdown_with_every_markup_inert(page):
    driver = page.driver
    driver.find_element(By.CSS_SELECTOR, 'button.att[data-id="t2-a2"]').click()
    answer = driver.find_element(By.CSS_SELECTOR, "#viewer .md-answer")
    tags = [e.tag_name for e in answer.find_elements(By.CSS_SELECTOR, "*")]
    # only the renderer's own elements: no img, a, script, b or i from the answer
    assert set(tags) <= {"h4", "p", "strong", "code", "ul", "li", "span", "pre", "blockquote"}
    assert answer.find_element(By.TAG_NAME, "h4").text == "Result <img src=x onerror=alert(1)>"
    assert answer.find_element(By.TAG_NAME, "strong").text == "bold"
    assert "<b>code</b>" in [c.text for c in answer.find_elements(By.TAG_NAME, "code")]
    items = [li.text for li in answer.find_elements(By.TAG_NAME, "li")]
    assert items == ["one click <javascript:alert(1)>", "two pic <https://example.com/x.png>"]
    code = answer.find_element(By.CSS_SELECTOR, "pre.md-code").text
    assert code == "</script><script>alert(2)</script>"
    assert answer.find_element(By.TAG_NAME, "blockquote").text == "quoted <i>text</i>"
    assert driver.find_elements(By.CSS_SELECTOR, "#viewer img, #viewer a") == []
    page.screenshot("run-answer-markdown")
    toggle = driver.find_element(By.CSS_SELECTOR, "#viewer button.md-toggle")
    toggle.click()
    assert not answer.is_displayed()
    assert driver.find_element(By.CSS_SELECTOR, "pre.final-answer-source").text == MARKDOWN
    toggle.click()
    assert answer.is_displayed()
    assert page.alert_text() is None and page.console_errors() == []
