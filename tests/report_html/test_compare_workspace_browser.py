"""The compare page as a workspace, in headless Chromium: the attempts that differ from the
other run are marked, j/k/arrows move through the shown attempts, ``#attempt=<side>-…``
reopens one after a reload, Escape closes it and clears the address, and each run's own page
is written beside the compare page and linked from its header by a relative link."""

from __future__ import annotations

import errno

import pytest
from html_support import INFRA, PAYLOAD, F, P, caliper, demo_run, run, save, task
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

BEFORE = "2026-11-30T17-00-00Z"
AFTER = "2026-11-30T18-01-33Z"  # demo_run's id


def _before():
    return run(
        [
            task("Writes a commit", [F, F, P]),
            task("Config file", [P, F, INFRA]),
            task("Plain answer", [F, F, F]),
            task("Short", [P, P]),
            task(f"Task {PAYLOAD}", [P]),
        ],
        run_id=BEFORE,
    )


def _after():
    after = demo_run()  # Short first: its place in the after run is not its compare row's
    after.tasks = [task("Short", [P, P, F]), *after.tasks, task(f"Task {PAYLOAD}", [F])]
    for i, t in enumerate(after.tasks):
        t.index = i
    return after


# Worked out by hand from the outcomes above, attempt by attempt (number = position + 1):
# Writes a commit ✗✗✓ → ✓✗✓: attempt 1 differs; Config file ✓✗? → ✓✓?: attempt 2 differs;
# Plain answer ✗✗✗ → ✗✗✗: none; Short ✓✓ → ✓✓✗: the after run's attempt 3 has no
# counterpart; the hostile task ✓ → ✗: attempt 1.
DIFFERING = {
    ("Writes a commit", "a", "1"),
    ("Writes a commit", "b", "1"),
    ("Config file", "a", "2"),
    ("Config file", "b", "2"),
    ("Short", "b", "3"),
    (f"Task {PAYLOAD}", "a", "1"),
    (f"Task {PAYLOAD}", "b", "1"),
}


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    folder = tmp_path_factory.mktemp("workspace")
    results = folder / ".caliper" / "results" / "demo"
    return folder, save(_before(), results), save(_after(), results)


@pytest.fixture(scope="module")
def page(pair, browser):
    folder, a, b = pair
    out = folder / "site" / "compare.html"
    done = caliper("compare", str(a), str(b), "--format", "html", "-o", str(out), cwd=folder)
    assert done.returncode == 0, done.stderr
    assert f"Wrote {out}" in done.stderr and str(folder / "site" / "compare.runs") in done.stderr
    browser.open(out)
    browser.out = out
    return browser


def _reload(page) -> None:
    page.driver.refresh()
    page.driver.find_element(By.ID, "compare-tasks")


def _fresh(page) -> None:
    """The page loaded again without an address fragment (nothing open)."""
    page.open(page.out)


def _button(driver, name: str, side: str, number: str):
    row = driver.find_element(By.CSS_SELECTOR, f'#compare-tasks tr[data-name="{name}"]')
    return row.find_element(
        By.CSS_SELECTOR, f'button.att[data-side="{side}"][data-number="{number}"]'
    )


def _key(page, *keys: str) -> None:
    body = page.driver.find_element(By.TAG_NAME, "body")
    for key in keys:
        body.send_keys(key)


def _open_id(page) -> str | None:
    viewer = page.driver.find_element(By.ID, "viewer")
    return viewer.get_attribute("data-attempt") if viewer.is_displayed() else None


def _hash(page) -> str:
    return page.driver.execute_script("return location.hash")


def test_exactly_the_differing_attempts_are_marked_and_explained(page):
    driver = page.driver
    marked = set()
    for button in driver.find_elements(By.CSS_SELECTOR, "#compare-tasks button.att"):
        if "differs" in button.get_attribute("class").split():
            row = button.find_element(By.XPATH, "./ancestor::tr")
            marked.add(
                (
                    row.get_attribute("data-name"),
                    button.get_attribute("data-side"),
                    button.get_attribute("data-number"),
                )
            )
    assert marked == DIFFERING
    # the mark is visible: another background than an attempt that is alike in both runs
    same = _button(driver, "Plain answer", "a", "1")
    differs = _button(driver, "Writes a commit", "a", "1")
    background = "return getComputedStyle(arguments[0]).backgroundColor"
    assert driver.execute_script(background, same) != driver.execute_script(background, differs)
    # and explained: in each marked attempt's title and in the legend above the table
    assert differs.get_attribute("title") == (
        "attempt 1: task_fail; differs from the after run, where the same attempt was pass"
    )
    assert _button(driver, "Short", "b", "3").get_attribute("title") == (
        "attempt 3: task_fail; differs from the before run, where the same attempt is missing"
    )
    assert same.get_attribute("title") == "attempt 1: task_fail"
    legend = driver.find_element(By.ID, "differs-legend")
    assert "differs from the other run" in legend.text and "7 attempt(s) marked" in legend.text
    assert driver.find_element(By.ID, "different-count").text == "4 of 5 tasks differ"
    assert page.alert_text() is None and page.console_errors() == []
    print(f"screenshot: {page.screenshot('compare-differing-attempts')}")


def test_j_and_k_move_through_the_shown_attempts(page):
    _fresh(page)
    driver = page.driver
    driver.find_element(By.TAG_NAME, "body").click()
    _key(page, "j")
    assert _open_id(page) == "a-t0-a0" and _hash(page) == "#attempt=a-t0-a0"
    assert driver.find_element(By.ID, "viewer-title").text == "Writes a commit — before, attempt 1"
    _key(page, "j", Keys.ARROW_DOWN, "j")  # past the before strip into the after strip
    assert _open_id(page) == "b-t0-a0" and _hash(page) == "#attempt=b-t0-a0"
    _key(page, "k")
    assert _open_id(page) == "a-t0-a2"
    _key(page, Keys.ARROW_UP)
    assert _open_id(page) == "a-t0-a1"
    # only the differing tasks shown: from the Config file's last attempt the next shown one
    # is Short's (Plain answer is hidden)
    driver.find_element(By.ID, "only-different").click()
    _key(page, Keys.ESCAPE)  # the viewer covers the right of the page
    _button(driver, "Config file", "b", "3").click()
    assert _open_id(page) == "b-t1-a2"
    _key(page, "j")
    assert _open_id(page) == "a-t3-a0"
    assert driver.find_element(By.ID, "viewer-title").text == "Short — before, attempt 1"
    driver.find_element(By.ID, "only-different").click()
    # typing in a field does not move (the checkbox is an input)
    driver.find_element(By.ID, "only-different").send_keys("j")
    assert _open_id(page) == "a-t3-a0"
    # Enter on a focused attempt opens it
    driver.execute_script("arguments[0].focus()", _button(driver, "Plain answer", "b", "2"))
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    assert _open_id(page) == "b-t2-a1" and _hash(page) == "#attempt=b-t2-a1"
    assert page.console_errors() == []
    print(f"screenshot: {page.screenshot('compare-keys-viewer')}")


def test_the_address_reopens_the_attempt_after_a_reload_and_escape_clears_it(page):
    driver = page.driver
    _fresh(page)
    _button(driver, "Config file", "b", "2").click()
    assert _hash(page) == "#attempt=b-t1-a1"
    _reload(page)
    assert _open_id(page) == "b-t1-a1"
    assert driver.find_element(By.ID, "viewer-title").text == "Config file — after, attempt 2"
    assert "open" in _button(driver, "Config file", "b", "2").get_attribute("class").split()
    columns = driver.find_elements(By.CSS_SELECTOR, "#side-by-side .side-answer")
    assert [c.get_attribute("data-side") for c in columns] == ["a", "b"]
    # the transcript is in the viewer (the page reads the runs with their transcripts)
    assert "Transcript (4 turns)" in driver.find_element(By.ID, "viewer-body").text
    _key(page, Keys.ESCAPE)
    assert _open_id(page) is None
    assert _hash(page) == "" and "#" not in driver.current_url
    _reload(page)
    assert _open_id(page) is None
    # an address naming no attempt of the page (or the run page's form) opens nothing
    for fragment in ("#attempt=c-t0-a0", "#attempt=t0-a0", "#attempt=a-t9-a9"):
        driver.get(page.out.resolve().as_uri() + fragment)
        assert _open_id(page) is None
    assert page.alert_text() is None and page.console_errors() == []


def test_each_runs_page_is_written_beside_it_and_linked_relatively(page, pair):
    folder, _, _ = pair
    driver = page.driver
    page.open(page.out)
    links = driver.find_elements(By.CSS_SELECTOR, "#run-pages a.run-page")
    hrefs = [a.get_attribute("href") for a in links]  # resolved by the browser
    raw = [driver.execute_script("return arguments[0].getAttribute('href')", a) for a in links]
    assert raw == [f"compare.runs/{BEFORE}.html", f"compare.runs/{AFTER}.html"]
    assert [a.text for a in links] == [f"demo/{BEFORE}", f"demo/{AFTER}"]
    assert driver.find_element(By.ID, "run-pages").text.startswith("Each run's own page: before")
    site = folder / "site"
    assert sorted(p.name for p in (site / "compare.runs").iterdir()) == [
        f"{BEFORE}.html",
        f"{AFTER}.html",
    ]
    for path in [page.out, *(site / "compare.runs").iterdir()]:
        text = path.read_text(encoding="utf-8")
        assert str(folder) not in text and "file://" not in text, path
        assert "http://" not in text and "https://" not in text, path
    for href, run_id in zip(hrefs, (BEFORE, AFTER), strict=True):
        driver.get(href)
        assert driver.find_element(By.ID, "run-id").text == run_id
        assert driver.find_element(By.ID, "spec-name").text == "demo"
        assert page.alert_text() is None and page.console_errors() == []
    # a click follows the link too
    page.open(page.out)
    driver.find_element(By.CSS_SELECTOR, '#run-pages a.run-page[data-side="b"]').click()
    assert driver.find_element(By.ID, "run-id").text == AFTER
    # with its transcripts (the compare read the runs whole for its pages)
    driver.find_element(By.CSS_SELECTOR, 'button.att[data-id="t1-a0"]').click()
    assert "Transcript (4 turns)" in driver.find_element(By.ID, "viewer-body").text
    print(f"screenshot: {page.screenshot('compare-linked-run-page')}")
    # the viewer links an attempt to the same attempt on its run's page: the after run's
    # Short, attempt 3, is row 3 here and task 0 there
    page.open(page.out)
    _button(driver, "Short", "b", "3").click()
    link = driver.find_element(By.CSS_SELECTOR, "#viewer a.run-attempt-link")
    assert link.text == "open on the after run's page"
    assert driver.execute_script("return arguments[0].getAttribute('href')", link) == (
        f"compare.runs/{AFTER}.html#attempt=t0-a2"
    )
    link.click()
    assert driver.find_element(By.ID, "run-id").text == AFTER
    assert driver.find_element(By.ID, "viewer-title").text == "Short — attempt 3"
    assert page.alert_text() is None and page.console_errors() == []


def test_a_page_to_stdout_shows_the_commands_instead(pair, tmp_path):
    _, a, b = pair
    done = caliper("compare", str(a), str(b), "--format", "html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert 'class="run-page-command"' in done.stdout and 'class="run-page"' not in done.stdout
    assert f"caliper report demo/{BEFORE} --format html -o {BEFORE}.html" in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_a_hostile_run_id_is_a_safe_file_name_and_an_inert_link(tmp_path, browser):
    run_id = '2026-11-30T17-00-00Z"><img src=x onerror=alert(1)> #?%'
    results = tmp_path / ".caliper" / "results" / "demo"
    a = save(run([task("Writes a commit", [F, F, P])], run_id=run_id), results)
    b = save(run([task("Writes a commit", [P, F, P])], run_id=AFTER), results)
    out = tmp_path / "my compare.html"
    done = caliper("compare", str(a), str(b), "--format", "html", "-o", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    written = sorted(p.name for p in (tmp_path / "my compare.runs").iterdir())
    assert written == [
        "2026-11-30T17-00-00Z___img_src_x_onerror_alert_1______.html",
        f"{AFTER}.html",
    ]
    browser.open(out)
    driver = browser.driver
    assert browser.alert_text() is None and browser.console_errors() == []
    link = driver.find_element(By.CSS_SELECTOR, '#run-pages a.run-page[data-side="a"]')
    assert link.text == f"demo/{run_id}"
    assert driver.execute_script("return arguments[0].getAttribute('href')", link) == (
        "my%20compare.runs/2026-11-30T17-00-00Z___img_src_x_onerror_alert_1______.html"
    )
    assert driver.find_elements(By.CSS_SELECTOR, "img") == []
    link.click()
    assert driver.find_element(By.ID, "run-id").text == run_id
    assert browser.alert_text() is None and browser.console_errors() == []


def test_a_full_disk_while_writing_a_run_page_is_exit_74_and_no_compare_page(
    pair, tmp_path, monkeypatch
):
    """In-process: the run pages go through the one output writer, so a full disk there is
    its one message and exit 74, and the compare page (written last) is not written."""
    from caliper.errors import CaliperError
    from caliper.report.html.output import emit_compare
    from caliper.results.compare import compare_runs
    from caliper.results.store import load_run
    from caliper.system import output_file

    _, a_path, b_path = pair
    a, b = load_run(a_path), load_run(b_path)

    def full(fd: int, payload: bytes) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(output_file, "_write_all", full)
    out = tmp_path / "compare.html"
    with pytest.raises(CaliperError) as raised:
        emit_compare(a, b, compare_runs(a, b), out, 0.95)
    assert raised.value.exit_code == 74
    assert "no space left" in raised.value.message
    assert str(tmp_path / "compare.runs" / f"{BEFORE}.html") in raised.value.message
    assert not out.exists()
    assert list((tmp_path / "compare.runs").iterdir()) == []  # no temporary file left


def test_an_output_that_is_a_folder_is_refused_before_anything_is_written(pair, tmp_path):
    _, a, b = pair
    target = tmp_path / "compare.html"
    target.mkdir()
    done = caliper("compare", str(a), str(b), "--format", "html", "-o", str(target), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "is a directory" in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["compare.html"]


def test_run_pages_of_runs_with_one_id_get_distinct_plain_names(tmp_path):
    """Two specs' runs can share a run id; a run id can hold a path separator or a leading
    dot: each page still gets its own plain file name inside the runs folder."""
    from caliper.report.html.output import write_run_pages

    runs = [
        run([task("t", [P])], spec_name="one", run_id=BEFORE),
        run([task("t", [P])], spec_name="two", run_id=BEFORE),
        run([task("t", [F])], spec_name="three", run_id="../../escaped"),
        run([task("t", [F])], spec_name="four", run_id=".hidden"),
    ]
    links = write_run_pages(runs, tmp_path / "site" / "cmp.html", 0.95)
    assert links == [
        f"cmp.runs/{BEFORE}.html",
        f"cmp.runs/{BEFORE}-2.html",
        "cmp.runs/run.._.._escaped.html",
        "cmp.runs/run.hidden.html",
    ]
    written = sorted(p.name for p in (tmp_path / "site" / "cmp.runs").iterdir())
    assert written == sorted(link.split("/", 1)[1] for link in links)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # nothing escaped
