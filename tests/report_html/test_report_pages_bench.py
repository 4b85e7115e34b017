"""``benchmarks/report_pages.py --smoke`` runs end to end (so the page-budget benchmark of
issue 33 cannot rot): it builds its runs, writes both pages and opens them in Chromium."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from browser_support import find_browser

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "report_pages.py"


@pytest.mark.slow
def test_page_budget_benchmark_smoke(tmp_path):
    binary, driver = find_browser()
    args = [sys.executable, str(BENCH), "--smoke", "--json", "--scratch", str(tmp_path / "b")]
    if not (binary and driver):
        args.append("--no-browser")
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    figures = json.loads(done.stdout)
    assert figures["attempts"] == 50 and figures["runs"] == 2
    assert figures["run_page_mb"] > 0 and figures["history_page_mb"] > 0
    for key in ("gen_run_wall", "gen_history_wall", "gen_run_cpu"):
        assert figures[key]["min"] <= figures[key]["median"] <= figures[key]["max"]
    if binary and driver:
        assert figures["run_first_open"]["median"] > 0 and figures["history_load"]["median"] > 0
    page = (tmp_path / "b" / "run.html").read_text(encoding="utf-8")
    assert page.count('class="att') >= 50  # every attempt has its button
