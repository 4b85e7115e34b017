"""The matrix page (``caliper report --matrix ID --format html``) in headless Chromium: the
grid's figures, a cell opening its attempts, each task's answers side by side across four
engines, hostile text inert, no local path in the page.

The expected figures are worked out here from the saved attempts (counts read back from the
results files, the continuity-corrected Wilson interval written out below), and checked
against the text form's Markdown output of the same runs.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from statistics import NormalDist

import pytest
from html_support import INFRA, PAYLOAD, PAYLOADS, F, P, caliper, page_text, run, save, task
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

MATRIX = "2026-12-01T10-00-00Z-4e6a1b"
HOSTILE_ENGINE = "hermes:<img src=x onerror=alert(1)>"
ENGINES = ["claude-code", "codex:gpt-5.5", "pi", HOSTILE_ENGINE]
HOSTILE_TASK = f"Plain {PAYLOADS[0]}"
LABELS = {P: "pass", F: "task failed", INFRA: "infrastructure error (not counted)"}
OUTCOMES = {
    "claude-code": {"commit": [P] * 8, "config": [P, P, F, INFRA], HOSTILE_TASK: [F, P, P]},
    "codex:gpt-5.5": {"commit": [P] + [F] * 7, "config": [P, F, F], HOSTILE_TASK: [F, F, F]},
    "pi": {"commit": [P] * 7 + [F], "config": [P, P, P], HOSTILE_TASK: [P]},
    HOSTILE_ENGINE: {"commit": [P, F] * 4, "config": [F, F, P]},  # no HOSTILE_TASK
}


def answer(engine: str, name: str, number: int) -> str:
    """A distinct final answer per engine, task and attempt (Markdown, with payloads)."""
    return f"**{engine}** says {number} on {name}\n\n- a list item\n- {PAYLOAD}"


def _engine_run(number: int, engine: str):
    backend, _, model = engine.partition(":")
    tasks = [
        task(name, outs)
        if name != "config"  # config asserts activates: the skill loads when it passes
        else task(
            name,
            outs,
            expected=["git-commit"],
            activated=[None if o is INFRA else ["git-commit"] if o is P else [] for o in outs],
        )
        for name, outs in OUTCOMES[engine].items()
    ]
    for t in tasks:
        for a in t.attempts:
            a.final_answer = answer(engine, t.name, a.attempt)
    return run(
        tasks,
        run_id=f"2026-12-01T10-00-0{number}Z",
        backend=backend,
        model=model or None,
        requested_model=engine,
        matrix={"id": MATRIX, "engine": engine, "engines": ENGINES},
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("matrix")
    for number, engine in enumerate(ENGINES):
        save(_engine_run(number, engine), folder / ".caliper" / "results" / "demo")
    return folder


@pytest.fixture(scope="module")
def page(project, browser):
    out = project / "matrix.html"
    done = caliper("report", "--matrix", MATRIX, "--format", "html", "-o", str(out), cwd=project)
    assert done.returncode == 0, done.stderr
    assert "Wrote" in done.stderr
    browser.open(out)
    return browser, out


def wilson_cc(successes: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson's score interval with continuity correction (Newcombe 1998, method 4)."""
    z = NormalDist().inv_cdf(1 - (1 - level) / 2)
    p = successes / n
    low = 2 * n * p + z * z - 1 - z * math.sqrt(z * z - 2 - 1 / n + 4 * p * (n * (1 - p) + 1))
    high = 2 * n * p + z * z + 1 + z * math.sqrt(z * z + 2 - 1 / n + 4 * p * (n * (1 - p) - 1))
    return (
        0.0 if successes == 0 else low / (2 * (n + z * z)),
        1.0 if successes == n else high / (2 * (n + z * z)),
    )


def _bound(value: float) -> str:
    return f"{value * 100:.0f}" if value in (0.0, 1.0) else f"{value * 100:.1f}"


def expected_cell(outcomes: list[str]) -> str:
    """``passes/usable rate [low–high]`` from saved outcome values (pass and fail usable;
    fewer than 3 usable tries have no informative interval)."""
    passes = outcomes.count("pass")
    usable = passes + outcomes.count("task_fail")
    text = f"{passes}/{usable} {passes / usable * 100:.1f}%"
    if usable < 3:
        return f"{text} (uninformative)"
    low, high = wilson_cc(passes, usable)
    return f"{text} [{_bound(low)}–{_bound(high)}]"


def saved_outcomes(project: Path) -> dict[str, dict[str, list[str]]]:
    """engine -> task -> outcome values, read back from the saved results files."""
    out: dict[str, dict[str, list[str]]] = {}
    for path in sorted((project / ".caliper" / "results" / "demo").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        engine = data["meta"]["matrix"]["engine"]
        by_task = {t["name"]: [a["outcome"] for a in t["attempts"]] for t in data["tasks"]}
        out[engine] = by_task
    return out


def _unescape_md(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text).replace("&lt;", "<").replace("&amp;", "&")


def markdown_cells(project: Path) -> dict[str, list[str]]:
    """Row name -> cell texts of ``caliper report --matrix ID --format markdown``."""
    done = caliper("report", "--matrix", MATRIX, "--format", "markdown", cwd=project)
    assert done.returncode == 0, done.stderr
    rows = {}
    table = done.stdout.split("\n\n")[1]  # the first table: the matrix (then differences)
    for line in table.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            line = line.replace(" **\\***", " *")  # the bold significance mark
            cells = [_unescape_md(c.strip()) for c in line.strip("|").split(" | ")]
            rows[cells[0].strip("*")] = [c.strip() for c in cells[1:]]
    return rows


def grid_row(driver, name: str):
    for row in driver.find_elements(By.CSS_SELECTOR, "#matrix-grid tr.mx-row"):
        if row.get_attribute("data-name") == name:
            return row
    raise AssertionError(f"no row {name!r}")


def test_grid_figures_equal_the_saved_attempts_and_the_text_form(page, project):
    browser, _ = page
    driver = browser.driver
    heads = driver.find_elements(By.CSS_SELECTOR, "#matrix-grid th.mx-engine")
    assert [h.text for h in heads] == ENGINES
    saved = saved_outcomes(project)
    assert set(saved) == set(ENGINES)
    text_form = markdown_cells(project)
    for name in ("commit", "config", HOSTILE_TASK):
        row = grid_row(driver, name)
        cells = row.find_elements(By.CSS_SELECTOR, "td.mx-cell")
        assert len(cells) == 4
        for engine, cell, md in zip(ENGINES, cells, text_form[name], strict=True):
            if name not in saved[engine]:
                assert cell.text == "not in this run" == md
                continue
            score = cell.find_element(By.CSS_SELECTOR, ".mx-score").text
            assert score.rstrip(" *") == expected_cell(saved[engine][name]), (engine, name)
            assert score == md.split(" · ")[0]
            if name == "config":  # skill loaded exactly when the attempt passed
                activation = cell.find_element(By.CSS_SELECTOR, ".mx-activation").text
                assert activation == md.split(" · ")[1]
                assert activation.rstrip(" *").startswith(
                    "skill " + expected_cell(saved[engine][name]).split(" ", 1)[0]
                )
            k = cell.find_element(By.CSS_SELECTOR, ".mx-k").text
            assert k == f"k={len(saved[engine][name])}"
            assert len(cell.find_elements(By.CSS_SELECTOR, "button.att")) == len(
                saved[engine][name]
            )
    # 8/8 against 1/8 on commit: Fisher's two-sided p sums the tables as unlikely as the
    # observed one, 8 and 1 of the 9 passes in the first 8 tries, each C(9,8)·C(7,0)/C(16,8)
    # = 9/12870, so p = 18/12870; Holm multiplies the second smallest of the 21 p-values by
    # 20 (the whole-run codex−pi test is smaller): 0.028, significant; no other task is
    commit = grid_row(driver, "commit")
    marks = [
        c.find_element(By.CSS_SELECTOR, ".mx-score").text.endswith(" *")
        for c in commit.find_elements(By.CSS_SELECTOR, "td.mx-cell")
    ]
    assert marks == [True, True, False, False]
    summary = commit.find_element(By.CSS_SELECTOR, "td.mx-summary").text
    assert summary.startswith("codex:gpt-5.5 − claude-code: −88 pts")
    first = driver.find_elements(By.CSS_SELECTOR, "#matrix-differences tbody tr")[0]
    assert [c.text for c in first.find_elements(By.TAG_NAME, "td")][:3] == [
        "commit",
        "pass rate",
        "claude-code",
    ]
    assert f"p={18 / 12870 * 20:.3f}" == first.find_elements(By.TAG_NAME, "td")[5].text
    assert grid_row(driver, "config").find_element(By.CSS_SELECTOR, "td.mx-summary").text == (
        "none"
    )
    # the Score row: each engine's mean task rate, as the text form prints it
    scores = driver.find_elements(By.CSS_SELECTOR, "#matrix-score td.mx-overall")
    assert [s.text for s in scores] == text_form["Score"]
    for engine, shown in zip(ENGINES, scores, strict=True):
        rates = []
        for outcomes in saved[engine].values():
            usable = outcomes.count("pass") + outcomes.count("task_fail")
            rates.append(outcomes.count("pass") / usable)
        assert shown.text.startswith(f"{sum(rates) / len(rates) * 100:.1f}%")
    # the whole run: codex:gpt-5.5 and pi differ significantly (the text form's table too)
    overall = driver.find_element(By.CSS_SELECTOR, "#matrix-score td.mx-summary").text
    assert overall.startswith("pi − codex:gpt-5.5: +81 pts")
    assert "whole run" in [
        c.find_elements(By.TAG_NAME, "td")[0].text
        for c in driver.find_elements(By.CSS_SELECTOR, "#matrix-differences tr.sig")
    ]
    loaded = driver.find_elements(By.CSS_SELECTOR, "#matrix-skill-loaded td.mx-overall")
    assert [s.text for s in loaded] == text_form["Skill loaded"]
    diffs = driver.find_elements(By.CSS_SELECTOR, "#matrix-differences tbody tr")
    # 6 pairs; per pair the tasks both measured, plus a whole-run test when more than one
    # pass rate: per pair the tasks both measured, plus a whole-run test when more than
    # one; skill loaded: config alone, one test per pair
    assert len(diffs) == 3 * (3 + 1) + 3 * (2 + 1) + 6
    assert browser.console_errors() == []
    print(f"screenshot: {browser.screenshot('matrix-page')}")


def test_a_cell_opens_its_attempts_in_the_viewer(page):
    browser, _ = page
    driver = browser.driver
    cell = grid_row(driver, "config").find_elements(By.CSS_SELECTOR, "td.mx-cell")[1]
    cell.find_element(By.CSS_SELECTOR, ".mx-k").click()  # the cell, not one of its attempts
    viewer = driver.find_element(By.ID, "viewer")
    assert viewer.is_displayed()
    assert driver.find_element(By.ID, "viewer-title").text == "config — codex:gpt-5.5, attempt 1"
    strip = driver.find_elements(By.CSS_SELECTOR, "#viewer-strip button.att")
    assert [b.text for b in strip] == ["✓", "✗", "✗"]
    assert "codex:gpt-5.5 says 1 on config" in viewer.text
    strip[2].click()  # move to attempt 3 from the viewer's strip
    assert driver.find_element(By.ID, "viewer-title").text == "config — codex:gpt-5.5, attempt 3"
    assert "Says 41, not 42." in viewer.text  # its failed check
    assert "codex:gpt-5.5 says 3 on config" in viewer.text
    print(f"screenshot: {browser.screenshot('matrix-viewer')}")
    driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    assert not viewer.is_displayed()
    # an attempt button of another cell opens that attempt
    pi = grid_row(driver, "commit").find_elements(By.CSS_SELECTOR, "td.mx-cell")[2]
    pi.find_elements(By.CSS_SELECTOR, "button.att")[7].click()
    assert driver.find_element(By.ID, "viewer-title").text == "commit — pi, attempt 8"
    assert "Says 41, not 42." in viewer.text and "pi says 8 on commit" in viewer.text
    driver.find_element(By.ID, "viewer-close").click()
    assert not viewer.is_displayed()
    assert browser.console_errors() == []


def test_answers_side_by_side_across_engines(page):
    browser, _ = page
    driver = browser.driver
    grid_row(driver, "config").find_element(By.CSS_SELECTOR, "button.mx-answers").click()
    panel = driver.find_element(By.ID, "answers")
    assert panel.is_displayed()
    heads = panel.find_elements(By.CSS_SELECTOR, "thead th")
    assert [h.text for h in heads] == ["attempt", *ENGINES]
    rows = panel.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) == 4  # claude-code ran config 4 times, the others 3
    for i, row in enumerate(rows):
        cells = row.find_elements(By.CSS_SELECTOR, "td.mx-answer")
        assert len(cells) == 4
        for engine, cell in zip(ENGINES, cells, strict=True):
            outcomes = OUTCOMES[engine]["config"]
            if i >= len(outcomes):
                assert cell.text == "no such attempt"
                continue
            # rendered Markdown: the bold engine name loses its asterisks
            assert f"{engine} says {i + 1} on config" in cell.text
            tag = cell.find_element(By.CSS_SELECTOR, ".verdict-tag").text
            assert tag.split(";")[0] == LABELS[outcomes[i]]  # then the activation check
    # four columns fit a 1400 px window: no horizontal scroll, each column at least 250 px
    width = driver.execute_script("return document.getElementById('answers').scrollWidth")
    assert width <= 1400
    assert all(h.size["width"] >= 250 for h in heads[1:])
    print(f"screenshot: {browser.screenshot('matrix-answers')}")
    # a column's "open attempt" opens the viewer above the panel; Esc closes it, then the panel
    rows[1].find_elements(By.CSS_SELECTOR, "button.mx-open")[3].click()
    assert driver.find_element(By.ID, "viewer-title").text == (
        f"config — {HOSTILE_ENGINE}, attempt 2"
    )
    body = driver.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.ESCAPE)
    assert panel.is_displayed() and not driver.find_element(By.ID, "viewer").is_displayed()
    body.send_keys(Keys.ESCAPE)
    assert not panel.is_displayed()
    assert browser.console_errors() == []


def test_hostile_names_and_answers_stay_inert(page):
    browser, out = page
    driver = browser.driver
    row = grid_row(driver, HOSTILE_TASK)
    assert row.find_element(By.CSS_SELECTOR, ".name-text").text == HOSTILE_TASK
    row.find_element(By.CSS_SELECTOR, "button.mx-answers").click()
    panel = driver.find_element(By.ID, "answers")
    assert PAYLOADS[1] in panel.text and PAYLOADS[3] in panel.text
    row_cells = panel.find_elements(By.CSS_SELECTOR, "tbody tr")[0].find_elements(
        By.CSS_SELECTOR, "td.mx-answer"
    )
    assert row_cells[3].text == "no such attempt"  # the hostile engine's run lacks the task
    panel.find_element(By.ID, "answers-close").click()
    assert driver.find_element(By.ID, "matrix-runs").text.count(HOSTILE_ENGINE) == 1
    assert browser.alert_text() is None
    assert driver.find_elements(By.CSS_SELECTOR, "img") == []
    scripts = [s.get_attribute("type") or "" for s in driver.find_elements(By.TAG_NAME, "script")]
    assert scripts == ["application/gzip", "application/json", ""]
    assert browser.console_errors() == []
    html = out.read_text(encoding="utf-8")
    assert "<img src=x" not in html and "<script>alert" not in html


def test_the_page_holds_no_local_path_and_loads_nothing(page, project):
    _, out = page
    html = page_text(out.read_text(encoding="utf-8"))
    assert str(project) not in html
    assert "/work/demo.eval.yaml" not in html  # the runs' spec_path
    assert ".caliper/results" not in html
    assert "default-src 'none'" in html
    assert not re.search(r"(src|href)=\"(https?:)?//", html)
    for engine_run in ("demo/2026-12-01T10-00-00Z", "demo/2026-12-01T10-00-03Z"):
        assert engine_run in html  # runs are named by reference instead
