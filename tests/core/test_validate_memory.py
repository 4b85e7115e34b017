"""``caliper validate`` of a spec with 10,765 skills stays within a loose memory budget.

Runs ``benchmarks/validate_memory.py`` (the real ``caliper validate`` in a fresh process,
peak RSS from ``wait4``): about 48 MiB when written, 65 MiB before the scans stopped being
kept on every skill (the budget of 60 MiB leaves room for noise and fails the old code).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "validate_memory.py"


@pytest.mark.slow
def test_validate_of_ten_thousand_skills_stays_under_the_memory_budget() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--skills", "10765", "--rounds", "1", "--budget-mb", "60"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "peak RSS" in done.stdout
