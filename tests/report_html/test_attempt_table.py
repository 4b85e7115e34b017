"""The attempt table as CSV and JSON Lines: from ``caliper report --format csv|jsonl`` and
from the run page's export buttons, which must give the same text."""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path

import pytest
from html_support import PAYLOAD, caliper, demo_run, save
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from caliper.results.models import Outcome

HOSTILE_ANSWER = 'He said "yes", then\n=HYPERLINK("http://x")\r\n' + PAYLOAD


def hostile_run():
    """The demo run with answers that need quoting, a formula, markup, and no usage."""
    results = demo_run()
    results.tasks[0].attempts[0].final_answer = HOSTILE_ANSWER
    results.tasks[0].attempts[1].final_answer = "-1 is the answer"
    results.tasks[1].attempts[2].usage = None
    results.tasks[1].attempts[2].final_answer = None
    results.tasks[2].attempts[0].duration_seconds = 1.25
    results.tasks[2].attempts[1].outcome = Outcome.TIMEOUT
    return results


@pytest.fixture
def saved(tmp_path) -> Path:
    return save(hostile_run(), tmp_path / ".caliper" / "results" / "demo")


def table(saved: Path, fmt: str, cwd: Path) -> str:
    """``caliper report SAVED --format FMT -o FILE``, the file's exact text (stdout read as
    text would turn the answer's CR LF into LF)."""
    out = cwd / f"table.{fmt}"
    done = caliper("report", str(saved), "--format", fmt, "-o", str(out), cwd=cwd)
    assert done.returncode == 0, done.stderr
    return out.read_bytes().decode("utf-8")


def test_csv_reads_back_with_pythons_csv_module(saved, tmp_path):
    rows = list(csv.DictReader(io.StringIO(table(saved, "csv", tmp_path), newline="")))
    assert len(rows) == 9
    first = rows[0]
    assert first["task"] == "Writes a commit" and first["attempt"] == "1"
    assert first["outcome"] == "pass" and first["kind"] == "pass"
    assert first["final_answer"] == HOSTILE_ANSWER  # quoted: commas, quotes, CR and LF
    assert rows[1]["final_answer"] == "'-1 is the answer"  # a spreadsheet formula guarded
    assert first["input_tokens"] == "1000" and first["total_tokens"] == "1350"
    assert first["duration_seconds"] == "5" and rows[6]["duration_seconds"] == "1.25"
    assert first["activated"] == "git-commit" and first["expected"] == "git-commit"
    unusable = rows[5]
    assert unusable["outcome"] == "infra_error" and unusable["kind"] == "unusable"
    assert unusable["input_tokens"] == "" and unusable["final_answer"] == ""
    assert rows[7]["kind"] == "failed"  # a timeout counts as a failure by default


def test_jsonl_keeps_values_exactly(saved, tmp_path):
    rows = [json.loads(line) for line in table(saved, "jsonl", tmp_path).split("\n") if line]
    assert len(rows) == 9
    assert rows[0]["final_answer"] == HOSTILE_ANSWER
    assert rows[1]["final_answer"] == "-1 is the answer"
    assert rows[0]["activated"] == ["git-commit"] and rows[5]["activated"] is None
    assert rows[5]["input_tokens"] is None and rows[6]["duration_seconds"] == 1.25
    assert list(rows[0]) == [
        "task",
        "attempt",
        "outcome",
        "kind",
        "verdict",
        "duration_seconds",
        "input_tokens",
        "output_tokens",
        "total_tokens",
        "activated",
        "expected",
        "final_answer",
    ]


def test_table_to_a_file_and_bad_uses(saved, tmp_path):
    out = tmp_path / "attempts.csv"
    done = caliper("report", str(saved), "--format", "csv", "-o", str(out), cwd=tmp_path)
    assert done.returncode == 0 and f"Wrote {out}" in done.stderr
    assert out.read_text(encoding="utf-8").startswith("task,attempt,outcome,")
    done = caliper("report", str(saved), str(saved), "--format", "jsonl", cwd=tmp_path)
    assert done.returncode == 2 and "attempt table of one run" in done.stderr
    assert "Traceback" not in done.stderr
    done = caliper("report", str(saved), "--format", "text", "-o", str(out), cwd=tmp_path)
    assert done.returncode == 2 and "-o/--output is for --format html, csv or jsonl" in done.stderr


def test_page_export_equals_the_command_line(saved, tmp_path, browser):
    page = tmp_path / "report.html"
    done = caliper("report", str(saved), "--format", "html", "-o", str(page), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    expected = {fmt: table(saved, fmt, tmp_path) for fmt in ("csv", "jsonl")}
    browser.open(page)
    driver = browser.driver
    for fmt, text in expected.items():
        assert driver.execute_script(f"return attemptTable('{fmt}', false)") == text
    # the buttons download the attempts the filters show, as a file
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
    )
    Select(driver.find_element(By.ID, "f-outcome")).select_by_value("-failures-")
    driver.find_element(By.ID, "export-csv").click()
    target = downloads / "demo-2026-11-30T18-01-33Z.csv"
    for _ in range(50):
        if target.exists():
            break
        time.sleep(0.1)
    text = target.read_bytes().decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    assert [(r["task"], r["attempt"]) for r in rows] == [
        ("Writes a commit", "2"),
        ("Config file", "3"),
        ("Plain answer", "1"),
        ("Plain answer", "2"),
        ("Plain answer", "3"),
    ]
    assert browser.alert_text() is None and browser.console_errors() == []
