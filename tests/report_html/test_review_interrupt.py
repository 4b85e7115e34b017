"""``caliper review`` stopped by Ctrl-C through the real ``caliper`` script: exit 130 with one
line and no traceback, no derived run left half-made in the store, the parent untouched."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from html_support import CALIPER, save
from test_large_run import big_run

from caliper.results.store import load_run

pytestmark = pytest.mark.slow


def _start_review(parent: Path, cwd: Path) -> subprocess.Popen[str]:
    items = [{"task": "task 000", "attempt": 1, "verdict": "fail", "note": "wrong"}]
    doc = cwd / "overrides.json"
    doc.write_text(json.dumps({"reviewer": "ana", "overrides": items}), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.Popen(
        [str(CALIPER), "review", str(parent), str(doc)],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _others(folder: Path, parent: Path) -> list[str]:
    """Every file in the run's folder but the parent (claimed ids, temp files, summaries)."""
    return sorted(p.name for p in folder.iterdir() if p != parent)


def test_ctrl_c_while_the_derived_run_is_written_leaves_no_file(tmp_path):
    folder = tmp_path / ".caliper" / "results" / "big"
    parent = save(big_run(), folder)
    before = parent.read_bytes()
    existing = _others(folder, parent)
    process = _start_review(parent, tmp_path)
    # the new run's id is claimed (an empty file) before the 5,000 attempts are encoded
    # and written: Ctrl-C in that window
    deadline = time.monotonic() + 60
    claimed = None
    while claimed is None and time.monotonic() < deadline and process.poll() is None:
        claimed = next((p for p in folder.glob("*.json") if p != parent), None)
        time.sleep(0.002)
    assert claimed is not None, "review never claimed a run id"
    assert claimed.stat().st_size == 0, "the run was written before Ctrl-C could be sent"
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr  # docs/exit-codes.md: stopped by Ctrl-C
    assert stderr.strip() == "Stopped (Ctrl-C).", stderr
    assert "Traceback" not in stderr + stdout
    assert _others(folder, parent) == existing  # no claimed id, no temp file
    assert parent.read_bytes() == before


def test_ctrl_c_at_any_moment_leaves_the_store_whole(tmp_path):
    """Ctrl-C at a spread of moments of one review's life: each time exit 130 and one line,
    and the store holds the parent and at most one new run, which is complete."""
    folder = tmp_path / ".caliper" / "results" / "big"
    parent = save(big_run(), folder)
    before = parent.read_bytes()
    start = time.monotonic()
    full = _start_review(parent, tmp_path)
    _, stderr = full.communicate(timeout=120)
    whole = time.monotonic() - start
    assert full.returncode == 0, stderr
    for made in folder.glob("*.json"):
        if made != parent:
            made.unlink()
    for fraction in (0.1, 0.4, 0.7, 0.9):
        process = _start_review(parent, tmp_path)
        time.sleep(whole * fraction)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=120)
        if process.returncode == 0:
            continue  # it finished before the signal came (a loaded machine is slower)
        assert process.returncode == 130, stderr
        assert "Stopped (Ctrl-C)." in stderr and "Traceback" not in stderr + stdout
        assert len(stderr.strip().splitlines()) == 1, stderr
        for made in (p for p in folder.glob("*.json") if p != parent):
            assert load_run(made).meta.derived_by == "review"  # a whole run, never a piece
            made.unlink()
        assert not list(folder.glob(".*.tmp")) and parent.read_bytes() == before
