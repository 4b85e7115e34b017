"""``caliper report --format html`` as a command: stdout, -o, bad -o, odd runs; and the
browser fixture's skip-or-fail rule."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from html_support import caliper, demo_run, page_text, run, save, task

from caliper.results.models import AttemptRecord, Outcome


def test_html_goes_to_stdout_without_o(tmp_path):
    path = save(demo_run(), tmp_path)
    done = caliper("report", str(path), "--format", "html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("<!DOCTYPE html>") and done.stdout.rstrip().endswith("</html>")
    assert done.stderr == ""


def test_o_needs_html(tmp_path):
    path = save(demo_run(), tmp_path)
    done = caliper("report", str(path), "-o", str(tmp_path / "x.html"), cwd=tmp_path)
    assert done.returncode == 2 and "-o/--output is for --format html" in done.stderr
    assert not (tmp_path / "x.html").exists()


def test_o_that_cannot_be_written_is_one_message(tmp_path):
    path = save(demo_run(), tmp_path)
    (tmp_path / "file").write_text("")
    done = caliper(
        "report",
        str(path),
        "--format",
        "html",
        "-o",
        str(tmp_path / "file" / "x.html"),
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"Error: Could not write {tmp_path / 'file' / 'x.html'}")
    assert "Traceback" not in done.stderr
    (tmp_path / "folder").mkdir()
    done = caliper(
        "report", str(path), "--format", "html", "-o", str(tmp_path / "folder"), cwd=tmp_path
    )
    assert done.returncode == 2 and "is a directory" in done.stderr


def test_odd_runs_render(tmp_path):
    """No tasks; an attempt with nothing recorded; a partial run with an ablated skill."""
    empty = run([], run_id="2026-11-30T10-00-00Z")
    bare = run(
        [task("t", [Outcome.TIMEOUT])],
        run_id="2026-11-30T11-00-00Z",
        partial=True,
        stop_reason="interrupted",
        ablated=["git-commit"],
    )
    bare.tasks[0].attempts[0] = AttemptRecord(task_name="t", attempt=1, outcome=Outcome.TIMEOUT)
    for results in (empty, bare):
        path = save(results, tmp_path)
        done = caliper("report", str(path), "--format", "html", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "</html>" in done.stdout
    assert "partial run: interrupted" in done.stdout and "without git-commit" in done.stdout


def test_odd_attempt_opens_in_the_browser(tmp_path, browser):
    from selenium.webdriver.common.by import By

    bare = run([task("t", [Outcome.TIMEOUT])])
    bare.tasks[0].attempts[0] = AttemptRecord(task_name="t", attempt=1, outcome=Outcome.TIMEOUT)
    path = save(bare, tmp_path)
    out = tmp_path / "bare.html"
    assert (
        caliper("report", str(path), "--format", "html", "-o", str(out), cwd=tmp_path).returncode
        == 0
    )
    browser.open(out)
    browser.driver.find_element(By.CSS_SELECTOR, "button.att").click()
    viewer = browser.driver.find_element(By.ID, "viewer").text
    assert "timed out (a failed attempt unless --timeouts unusable)" in viewer
    assert "no transcript was recorded" in viewer
    assert browser.console_errors() == []


PROBE = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {here!r})
    from browser_support import browser  # noqa: F401

    def test_needs_browser(browser):
        pass
    """
)


def _probe(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE.format(here=str(Path(__file__).parent)))
    clean = {k: v for k, v in os.environ.items() if k not in ("CI", "CALIPER_REQUIRE_E2E")}
    clean["PATH"] = str(Path(sys.executable).parent)  # no chromium on this PATH
    clean.update(env)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", str(probe)],
        cwd=tmp_path,
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_missing_browser_skips_outside_ci_and_fails_in_ci(tmp_path):
    outside = _probe(tmp_path)
    assert outside.returncode == 0, outside.stdout
    assert (
        "1 skipped" in outside.stdout
        and "chromium and chromium-driver not installed" in outside.stdout
    )
    for env in ({"CI": "true"}, {"CALIPER_REQUIRE_E2E": "1"}):
        inside = _probe(tmp_path, **env)
        assert inside.returncode == 1, inside.stdout
        assert "CI requires the browser tests to run" in inside.stdout


def test_undecodable_text_in_a_transcript_does_not_break_the_page(tmp_path):
    """A lone surrogate (from bytes a CLI printed that were not UTF-8) reaches the results as
    ``\\udcff``; the page is still written, as UTF-8."""
    results = demo_run()
    results.tasks[0].attempts[0].final_answer = "bad byte: \udcff"
    from caliper.results import codec

    path = tmp_path / "odd.json"  # JSON escapes the surrogate, so the file itself is ASCII
    path.write_text(json.dumps(codec.to_data(results), ensure_ascii=True), encoding="utf-8")
    out = tmp_path / "odd.html"
    done = caliper("report", str(path), "--format", "html", "-o", str(out), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "bad byte: ?" in page_text(out.read_text(encoding="utf-8"))


def test_setup_and_cleanup_failures_show_in_the_viewer(tmp_path, browser):
    from selenium.webdriver.common.by import By

    results = run([task("t", [Outcome.INFRA_ERROR, Outcome.PASS])])
    first, second = results.tasks[0].attempts
    first.setup_failed = True
    first.reason = "setup exited with status 1: npm ERR! missing package.json"
    # as the runner writes it: the attempt's own error, "; ", then the cleanup's failure
    second.error = "agent said; no; cleanup exited with status 2: rm: x; rm: y"
    path = save(results, tmp_path)
    out = tmp_path / "setup.html"
    assert (
        caliper("report", str(path), "--format", "html", "-o", str(out), cwd=tmp_path).returncode
        == 0
    )
    browser.open(out)
    notes = []
    for button in browser.driver.find_elements(By.CSS_SELECTOR, "button.att"):
        button.click()
        sections = browser.driver.find_elements(By.CSS_SELECTOR, "#viewer .v-section")
        notes += [s.text for s in sections if s.text.startswith("Setup / cleanup")]
    assert notes == [
        "Setup / cleanup\nsetup exited with status 1: npm ERR! missing package.json",
        "Setup / cleanup\ncleanup exited with status 2: rm: x; rm: y",
    ]
    assert browser.console_errors() == []
