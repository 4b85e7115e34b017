"""The compare page in headless Chromium: both sides per task, Δ with its interval, matrix."""

from __future__ import annotations

import pytest
from html_support import INFRA, F, P, caliper, demo_run, run, save, snapshot, task
from selenium.webdriver.common.by import By


def _before():
    return run(
        [
            task("Writes a commit", [F, F, P]),
            task("Config file", [P, F, INFRA]),
            task("Plain answer", [F, F, F]),
        ],
        run_id="2026-11-30T17-00-00Z",
        ablated=["git-commit"],
        skills=[snapshot("git-commit", ablated=True), snapshot("other-skill")],
    )


@pytest.fixture(scope="module")
def compared(tmp_path_factory, browser):
    folder = tmp_path_factory.mktemp("compare")
    results = folder / ".caliper" / "results" / "demo"
    a = save(_before(), results)
    b = save(demo_run(), results)
    out = folder / "compare.html"
    done = caliper("compare", str(a), str(b), "--format", "html", "-o", str(out), cwd=folder)
    assert done.returncode == 0, done.stderr  # no task got worse
    browser.open(out)
    return browser


def cells(row) -> list[str]:
    """The row's cell texts, the lines of a cell (a figure above its note) joined by a space."""
    return [" ".join(c.text.split("\n")) for c in row.find_elements(By.TAG_NAME, "td")]


def test_side_by_side_with_delta_and_interval(compared):
    driver = compared.driver
    assert driver.find_element(By.ID, "compare-title").text == (
        "demo: without git-commit → full neighbourhood"
    )
    # the same sentence as the text report's ablation headline; the interval is the MOVER
    # combination of continuity-corrected Wilson limits of 1/3→2/3, 1/2→2/2 and 0/3→0/3,
    # worked out apart from caliper's code: Δ = 0.2778, [−0.1853, +0.5939]; the whole-run
    # test is judged first at the full level, so its p is its own: enumerating the 2400
    # within-task relabellings, 1200 give |mean Δ| >= 0.2778, p = 0.5
    headline = driver.find_element(By.ID, "headline").text
    assert headline == "git-commit adds +28 pts [−19, +59], p=0.50 (not significant at 95%)"
    row = driver.find_element(By.CSS_SELECTOR, '#compare-tasks tr[data-name="Writes a commit"]')
    values = cells(row)
    assert values[1] == "✗✗✓" and values[3] == "✓✗✓"
    assert values[2].startswith("33.3% 1/3") and values[4].startswith("66.7% 2/3")
    assert values[5] == "+33.3%"
    # Newcombe's hybrid score interval with continuity correction (method 11) for 2/3 − 1/3,
    # worked by hand from the continuity-corrected limits 0.0177–0.8747 (1/3) and
    # 0.1253–0.9823 (2/3; R's prop.test): 1/3 − sqrt(0.5413² + 0.5413²) = −0.4322 and
    # 1/3 + sqrt(0.3157² + 0.3157²) = 0.7798
    assert values[6] == "[-43.2–78.0%]"
    config = driver.find_element(By.CSS_SELECTOR, '#compare-tasks tr[data-name="Config file"]')
    assert cells(config)[5] == "+50.0%"
    assert driver.find_element(By.ID, "delta").text == "+27.8%"
    # 1/3 → 2/3 is no evidence of change: Fisher's exact p = 1.0 for [[1, 2], [2, 1]]
    assert row.find_element(By.CSS_SELECTOR, ".verdict-tag").text == "not significant"
    assert row.find_element(By.CSS_SELECTOR, "td.p").text.startswith("1.000")
    warnings = driver.find_element(By.ID, "warnings").text
    assert "ablation differs" in warnings
    assert driver.find_elements(By.ID, "matrix") == []  # same engine: no matrix
    assert compared.console_errors() == []
    print(f"screenshot: {compared.screenshot('compare-page')}")


def test_sorting_by_delta(compared):
    driver = compared.driver
    driver.find_element(By.CSS_SELECTOR, '#compare-tasks th[data-sort="delta"]').click()
    names = [
        r.get_attribute("data-name") for r in driver.find_elements(By.CSS_SELECTOR, "tr.cmp-row")
    ]
    assert names == ["Plain answer", "Writes a commit", "Config file"]


def test_only_different_hides_tasks_alike_in_both_runs(compared):
    driver = compared.driver
    # Writes a commit (✗✗✓ → ✓✗✓) and Config file (✓✗? → ✓✓?) differ; Plain answer is ✗✗✗ twice
    assert driver.find_element(By.ID, "different-count").text == "2 of 3 tasks differ"
    toggle = driver.find_element(By.ID, "only-different")
    toggle.click()
    shown = [
        r.get_attribute("data-name")
        for r in driver.find_elements(By.CSS_SELECTOR, "tr.cmp-row")
        if r.is_displayed()
    ]
    assert sorted(shown) == ["Config file", "Writes a commit"]
    print(f"screenshot: {compared.screenshot('compare-only-different')}")
    toggle.click()
    assert all(r.is_displayed() for r in driver.find_elements(By.CSS_SELECTOR, "tr.cmp-row"))
    assert compared.console_errors() == []


def test_attempts_open_in_the_viewer_with_answers_side_by_side(compared):
    driver = compared.driver
    row = driver.find_element(By.CSS_SELECTOR, '#compare-tasks tr[data-name="Writes a commit"]')
    # after-run, attempt 2 (a failure in demo_run)
    row.find_element(By.CSS_SELECTOR, 'button.att[data-side="b"][data-number="2"]').click()
    viewer = driver.find_element(By.ID, "viewer")
    assert viewer.is_displayed()
    title = driver.find_element(By.ID, "viewer-title").text
    assert title == "Writes a commit — after, attempt 2"
    columns = driver.find_elements(By.CSS_SELECTOR, "#side-by-side .side-answer")
    assert [c.get_attribute("data-side") for c in columns] == ["a", "b"]
    assert all("Done." in c.text for c in columns)
    assert "Says 41, not 42." in viewer.text  # the after run's failed check, from the viewer
    driver.find_element(By.ID, "viewer-close").click()
    assert not viewer.is_displayed()
    assert compared.console_errors() == []
    print(f"screenshot: {compared.screenshot('compare-viewer')}")


def test_activation_card_and_run_page_links(compared):
    driver = compared.driver
    # before: no task of _before asserts activation, so only the after run has it; the card
    # is shown only when the comparison has an activation change
    cards = driver.find_elements(By.ID, "activation-card")
    links = driver.find_elements(By.CSS_SELECTOR, "#run-pages a.run-page")
    assert [a.get_attribute("href").rsplit("/", 2)[1:] for a in links] == [
        ["compare.runs", "2026-11-30T17-00-00Z.html"],
        ["compare.runs", "2026-11-30T18-01-33Z.html"],
    ]
    assert driver.find_elements(By.CSS_SELECTOR, "#run-pages code") == []
    assert len(cards) <= 1  # the compare module's fixture pair (no shared activation task)


def test_different_engines_get_a_matrix(tmp_path, browser):
    results = tmp_path / ".caliper" / "results" / "demo"
    a = save(demo_run(run_id="2026-11-30T17-00-00Z", backend="codex", model="gpt-9"), results)
    b = save(demo_run(), results)
    out = tmp_path / "engines.html"
    done = caliper("compare", str(a), str(b), "--format", "html", "-o", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    browser.open(out)
    matrix = browser.driver.find_element(By.ID, "matrix")
    heads = [h.text.splitlines()[0] for h in matrix.find_elements(By.CSS_SELECTOR, "thead th")]
    assert heads == ["task", "codex:gpt-9", "claude-code:claude-sonnet-5"]
    first = matrix.find_elements(By.CSS_SELECTOR, "tbody tr")[0]
    assert [c.text.splitlines()[0] for c in first.find_elements(By.TAG_NAME, "td")] == [
        "Writes a commit",
        "66.7% 2/3",
        "66.7% 2/3",
    ]
    assert browser.console_errors() == []
    print(f"screenshot: {browser.screenshot('compare-matrix')}")


def test_a_supported_regression_shows_p_and_verdict_and_exits_1(tmp_path, browser):
    results = tmp_path / ".caliper" / "results" / "demo"
    a = save(
        run([task("Writes a commit", [P] * 8 + [F] * 2)], run_id="2026-11-30T16-00-00Z"), results
    )
    b = save(run([task("Writes a commit", [P] * 2 + [F] * 8)]), results)
    out = tmp_path / "worse.html"
    done = caliper("compare", str(a), str(b), "--format", "html", "-o", str(out), cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # the page is written, then the gate fails
    assert "noise" in done.stderr
    browser.open(out)
    row = browser.driver.find_element(By.CSS_SELECTOR, "tr.cmp-row")
    assert "regression" in row.get_attribute("class")
    # Fisher's exact test, two-sided, 8/10 vs 2/10: p = 0.02301 (R: fisher.test); one test,
    # so Holm leaves it as it is
    assert row.find_element(By.CSS_SELECTOR, "td.p").text.split() == ["0.023", "(0.023)"]
    assert row.find_element(By.CSS_SELECTOR, ".verdict-tag").text == "regressed"
    assert browser.console_errors() == []


def test_output_needs_html(tmp_path):
    results = tmp_path / ".caliper" / "results" / "demo"
    a = save(demo_run(run_id="2026-11-30T17-00-00Z"), results)
    b = save(demo_run(), results)
    done = caliper("compare", str(a), str(b), "-o", str(tmp_path / "x.html"), cwd=tmp_path)
    assert done.returncode == 2
    assert "-o/--output is for --format html" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_pair_that_is_not_comparable_says_so_and_exits_2(tmp_path, browser):
    results = tmp_path / ".caliper" / "results" / "demo"
    a = save(demo_run(run_id="2026-11-30T16-00-00Z", partial=True, stop_reason="Ctrl-C"), results)
    b = save(demo_run(), results)
    out = tmp_path / "partial.html"
    done = caliper("compare", str(a), str(b), "--format", "html", "-o", str(out), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Not comparable" in done.stderr
    browser.open(out)
    notice = browser.driver.find_element(By.ID, "not-comparable").text
    assert notice.startswith("Not comparable: the before run 2026-11-30T16-00-00Z")
    assert browser.console_errors() == []


K55_NAMES = [
    "A fairly long task name number 0 about commits",
    "polls the deploy a bounded number of times (tools form)",
    "writes_a_conventional_commit_message_for_the_staged_change_in_the_monorepo",
    "refuses to force-push to a protected branch and explains which branch protection rule "
    "applies here",
]


def _k55_task(name: str, outcomes) -> object:
    """A k=55 task that asserts activation (so the activation column has figures)."""
    activated = [["git-commit"] if o is P else [] for o in outcomes]
    return task(name, outcomes, expected=["git-commit"], activated=activated)


def test_readable_at_k55(tmp_path, browser):
    # names of 46, 55, 74 (one word) and 98 characters; a drop in every task, so every
    # verdict is "regressed" or "not significant" and the activation notes are long
    before = [P] * 40 + [F] * 14 + [INFRA]
    after = [P, F] * 27 + [INFRA]
    results = tmp_path / ".caliper" / "results" / "demo"
    a = save(run([_k55_task(n, before) for n in K55_NAMES], run_id="2026-11-30T16-00-00Z"), results)
    b = save(run([_k55_task(n, after) for n in K55_NAMES]), results)
    out = tmp_path / "k55.html"
    done = caliper("compare", str(a), str(b), "--format", "html", "-o", str(out), cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # the drops are regressions
    browser.open(out)
    driver = browser.driver
    driver.set_window_size(1400, 900)
    width = driver.execute_script("return document.documentElement.clientWidth")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= width
    line = driver.execute_script(
        "return parseFloat(getComputedStyle(document.querySelector('#compare-tasks td.name'))"
        ".lineHeight) || 20"
    )
    box = "return arguments[0].getBoundingClientRect()"
    for row in driver.find_elements(By.CSS_SELECTOR, "#compare-tasks tr.cmp-row"):
        name = row.get_attribute("data-name")
        verdict = row.find_element(By.CSS_SELECTOR, "td.verdict-cell")
        assert driver.execute_script(box, verdict)["right"] <= width
        activation = row.find_element(By.CSS_SELECTOR, "td.activation")
        assert driver.execute_script(box, activation)["right"] <= width
        # up to 60 characters on two lines, the 98-character name on three
        text = row.find_element(By.CSS_SELECTOR, "td.name .name-text")
        lines = 2 if len(name) <= 60 else 3
        assert driver.execute_script(box, text)["height"] <= lines * line + 1, name
        # the strips are 10 attempts a line: 55 attempts on 6 lines, attempt 11 under 1
        for side in "ab":
            buttons = row.find_elements(By.CSS_SELECTOR, f'button.att[data-side="{side}"]')
            assert len(buttons) == 55
            first, tenth, eleventh, last = (
                driver.execute_script(box, buttons[i]) for i in (0, 9, 10, 54)
            )
            assert tenth["top"] == first["top"] and eleventh["top"] > first["top"]
            assert eleventh["left"] == first["left"]
            assert round((last["bottom"] - first["top"]) / (eleventh["top"] - first["top"])) == 6
    print(f"screenshot: {browser.screenshot('compare-k55')}")
    browser.driver.set_window_size(1400, 1000)


SIGHT = """
const b = arguments[0].getBoundingClientRect(), v = arguments[1].getBoundingClientRect();
const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
return {right: b.right, viewer_left: v.left, top: b.top, bottom: b.bottom,
        window_height: window.innerHeight, hit: hit === arguments[0]};
"""


def test_the_open_attempt_stays_in_sight_beside_the_viewer(tmp_path, browser):
    """At 1400 px, with strips of 10 attempts, the open viewer leaves the table's strips
    uncovered: the open attempt's button, the after run's too, is in the window, left of the
    viewer and not under it."""
    results = tmp_path / ".caliper" / "results" / "demo"
    names = ["Writes a commit", "Config file", "Plain answer"]
    a = save(run([task(n, [P, F] * 5) for n in names], run_id="2026-11-30T16-00-00Z"), results)
    b = save(run([task(n, [P, P, F, P, P] * 2) for n in names]), results)
    out = tmp_path / "k10.html"
    done = caliper("compare", str(a), str(b), "--format", "html", "-o", str(out), cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr
    browser.open(out)
    driver = browser.driver
    driver.set_window_size(1400, 1000)
    viewer = driver.find_element(By.ID, "viewer")
    for side in "ab":
        row = driver.find_element(By.CSS_SELECTOR, '#compare-tasks tr[data-name="Config file"]')
        button = row.find_elements(By.CSS_SELECTOR, f'button.att[data-side="{side}"]')[9]
        button.click()
        assert viewer.is_displayed() and "open" in button.get_attribute("class").split()
        seen = driver.execute_script(SIGHT, button, viewer)
        assert seen["hit"] and seen["right"] <= seen["viewer_left"], (side, seen)
        assert seen["top"] >= 0 and seen["bottom"] <= seen["window_height"] + 1, (side, seen)
    print(f"screenshot: {browser.screenshot('compare-viewer-open')}")
    driver.find_element(By.ID, "viewer-close").click()
    assert not viewer.is_displayed()
    assert browser.console_errors() == []


COLUMNS = """
const cell = arguments[0], viewer = arguments[1].getBoundingClientRect();
const c = cell.getBoundingClientRect();
const hit = document.elementFromPoint(Math.min(c.right - 2, viewer.left - 2), c.top + c.height / 2);
return {right: c.right, viewer_left: viewer.left, hit: !!hit && cell.contains(hit)};
"""


def test_the_later_columns_are_never_under_the_open_viewer(tmp_path, browser):
    """At 1400 px with k=55 strips the table is wider than the room the open viewer leaves:
    its later columns then scroll inside the page's column instead of lying under the
    viewer, and once scrolled to they are in sight left of it."""
    before = [P] * 40 + [F] * 14 + [INFRA]
    after = [P, F] * 27 + [INFRA]
    results = tmp_path / ".caliper" / "results" / "demo"
    a = save(run([_k55_task(n, before) for n in K55_NAMES], run_id="2026-11-30T16-00-00Z"), results)
    b = save(run([_k55_task(n, after) for n in K55_NAMES]), results)
    out = tmp_path / "k55-open.html"
    done = caliper("compare", str(a), str(b), "--format", "html", "-o", str(out), cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    browser.open(out)
    driver = browser.driver
    driver.set_window_size(1400, 900)
    viewer = driver.find_element(By.ID, "viewer")
    row = driver.find_element(By.CSS_SELECTOR, "#compare-tasks tr.cmp-row")
    row.find_elements(By.CSS_SELECTOR, 'button.att[data-side="a"]')[0].click()
    assert viewer.is_displayed()
    table = driver.find_element(By.ID, "compare-tasks")
    viewer_left = viewer.rect["x"]
    for selector in ("td.verdict-cell", "td.activation"):
        cell = row.find_element(By.CSS_SELECTOR, selector)
        driver.execute_script("arguments[0].scrollIntoView({inline: 'end'})", cell)
        seen = driver.execute_script(COLUMNS, cell, viewer)
        assert seen["right"] <= seen["viewer_left"] + 1 and seen["hit"], (selector, seen)
    # nothing of the table is drawn under the viewer
    box = driver.execute_script(
        "const t = arguments[0], r = t.parentElement.getBoundingClientRect();"
        "return {right: Math.min(t.getBoundingClientRect().right, r.right)}",
        table,
    )
    assert box["right"] <= viewer_left + 1, box
    assert browser.console_errors() == []
    driver.set_window_size(1400, 1000)
