"""``caliper review RUN OVERRIDES``: a person's verdicts saved as a derived run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from html_support import PAYLOAD, caliper, demo_run, save

from caliper.results.scoring import score_run
from caliper.results.store import load_run


@pytest.fixture
def saved(tmp_path) -> Path:
    return save(demo_run(), tmp_path / ".caliper" / "results" / "demo")


def overrides(tmp_path: Path, items: list, reviewer: str | None = "ana") -> Path:
    path = tmp_path / "overrides.json"
    doc: dict = {"overrides": items}
    if reviewer is not None:
        doc["reviewer"] = reviewer
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_review_saves_a_derived_run_and_leaves_the_parent(saved, tmp_path):
    before = saved.read_bytes()
    items = [
        {"task": "Plain answer", "attempt": 1, "verdict": "pass", "note": "41 is right " + PAYLOAD},
        {"task": "Writes a commit", "attempt": 1, "verdict": "fail", "note": "wrong file"},
    ]
    done = caliper("review", str(saved), str(overrides(tmp_path, items)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert saved.read_bytes() == before  # the parent is untouched
    files = sorted(p for p in saved.parent.glob("*.json") if p != saved)
    assert len(files) == 1
    child = load_run(files[0])
    meta = child.meta
    assert meta.derived_by == "review" and meta.parent_run == "demo/2026-11-30T18-01-33Z"
    assert meta.changes[0].startswith("verdicts of 2 attempt(s) set by ana at ")
    plain = child.tasks[2].attempts[0]
    assert plain.outcome.value == "pass"
    assert plain.checks[-1].key == "review" and plain.checks[-1].passed is True
    assert child.tasks[0].attempts[0].outcome.value == "task_fail"
    # task scores by hand: Writes a commit 1/3 (was 2/3), Config file 2/2, Plain answer 1/3
    scores = [t.score for t in score_run(child).tasks]
    assert scores == pytest.approx([1 / 3, 1.0, 1 / 3])
    report = caliper("report", str(files[0]), cwd=tmp_path)
    assert report.returncode == 0 and "A review of demo/2026-11-30T18-01-33Z" in report.stdout


def test_bad_overrides_are_one_message(saved, tmp_path):
    bad = [{"task": "Plain answer", "attempt": 9, "verdict": "pass", "note": "x"}]
    done = caliper("review", str(saved), str(overrides(tmp_path, bad)), cwd=tmp_path)
    assert done.returncode == 2 and "has no attempt 9 of task 'Plain answer'" in done.stderr
    no_note = [{"task": "Plain answer", "attempt": 1, "verdict": "pass", "note": " "}]
    done = caliper("review", str(saved), str(overrides(tmp_path, no_note)), cwd=tmp_path)
    assert done.returncode == 2 and "needs task" in done.stderr
    good = [{"task": "Plain answer", "attempt": 1, "verdict": "pass", "note": "ok"}]
    path = overrides(tmp_path, good, reviewer=None)
    done = caliper("review", str(saved), str(path), cwd=tmp_path)
    assert done.returncode == 2 and "names no reviewer" in done.stderr
    (tmp_path / "junk.json").write_text("{not json", encoding="utf-8")
    done = caliper("review", str(saved), str(tmp_path / "junk.json"), cwd=tmp_path)
    assert done.returncode == 2 and "is not a JSON overrides file" in done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(saved.parent.glob("*.json")) == [saved]  # nothing saved on bad input
