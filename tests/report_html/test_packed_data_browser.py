"""The run page's attempt data travels packed (gzip + base64) and is unpacked in the browser:
an attempt clicked before the unpacking ends opens when it ends, a search typed before it
applies when it ends, and data that cannot be unpacked says so in the viewer."""

from __future__ import annotations

import re

import pytest
from html_support import caliper, demo_run, page_attempts, save
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

FORGET = "attemptsPromise = null; attemptsValue = null;"
"""Script that drops the unpacked data, so the next need unpacks it again (asynchronously)."""


@pytest.fixture(scope="module")
def page(tmp_path_factory, browser):
    folder = tmp_path_factory.mktemp("packed")
    path = save(demo_run(), folder / ".caliper" / "results" / "demo")
    out = folder / "report.html"
    done = caliper("report", str(path), "--format", "html", "-o", str(out), cwd=folder)
    assert done.returncode == 0, done.stderr
    return browser, out


def test_the_attempt_data_is_packed_and_holds_every_attempt(page):
    browser, out = page
    html = out.read_text(encoding="utf-8")
    assert 'type="application/json"' not in html
    data = page_attempts(html)
    browser.open(out)
    ids = browser.driver.execute_script(
        "return Array.from(document.querySelectorAll('#tasks button.att')).map(b => b.dataset.id)"
    )
    assert sorted(ids) == sorted(data) and ids
    assert browser.driver.execute_script("return loadedAttempts()") is not None
    assert browser.console_errors() == []


def test_a_click_before_the_data_is_unpacked_opens_the_attempt_when_it_is(page):
    browser, out = page
    browser.open(out)
    driver = browser.driver
    hidden_at_click = driver.execute_script(
        FORGET
        + "document.querySelector('#tasks button.att[data-id=\"t1-a0\"]').click();"
        + "return [document.getElementById('viewer').hidden, loadedAttempts() === null];"
    )
    assert hidden_at_click == [True, True]  # the click waits for the unpacking
    viewer = driver.find_element(By.ID, "viewer")
    WebDriverWait(driver, 10).until(lambda d: viewer.get_attribute("data-attempt") == "t1-a0")
    assert viewer.is_displayed()
    title = driver.find_element(By.ID, "viewer-title").text
    assert re.fullmatch(r".+ — attempt 1", title), title
    assert "Transcript" in driver.find_element(By.ID, "viewer-body").text
    assert driver.execute_script("return location.hash") == "#attempt=t1-a0"
    assert browser.console_errors() == []


def test_a_search_typed_before_the_data_is_unpacked_applies_when_it_is(page):
    browser, out = page
    browser.open(out)
    driver = browser.driver
    total = len(driver.find_elements(By.CSS_SELECTOR, "#tasks button.att"))
    driver.execute_script(FORGET)
    driver.find_element(By.ID, "f-search").send_keys("no such text anywhere 7e3b")
    count = driver.find_element(By.ID, "f-count")
    WebDriverWait(driver, 10).until(lambda d: count.text == f"0 of {total} attempts")
    assert browser.console_errors() == []


def test_attempt_data_that_cannot_be_unpacked_is_said_in_the_viewer(page):
    browser, out = page
    browser.open(out)
    driver = browser.driver
    driver.execute_script(
        FORGET + "document.getElementById('attempt-data').textContent = 'bm90IGd6aXA=';"
    )
    driver.find_element(By.CSS_SELECTOR, '#tasks button.att[data-id="t0-a0"]').click()
    viewer = driver.find_element(By.ID, "viewer")
    WebDriverWait(driver, 10).until(lambda d: viewer.is_displayed())
    assert driver.find_element(By.ID, "viewer-title").text == "The attempts could not be read"
    assert "could not be unpacked" in driver.find_element(By.ID, "viewer-body").text
    browser.console_errors()  # the failed unpacking may log; the page said it
