"""``caliper report`` through the real console script, on runs saved with the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_results_support import caliper, make_project


def test_report_without_ref_shows_the_latest_run(tmp_path):
    project = make_project(tmp_path)
    out = caliper("report", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "CALIPER  —  demo" in out.stdout
    assert "run 2026-11-30T19-00-00Z" in out.stdout
    assert "✓ PASS" in out.stdout
    assert "Results saved to .caliper/results/demo/2026-11-30T19-00-00Z.json" in out.stdout


@pytest.mark.parametrize(
    "ref",
    ["demo", "demo.eval.yaml", ".caliper/results/demo/2026-11-30T18-01-33Z.json"],
)
def test_report_accepts_a_name_a_spec_or_a_file(tmp_path, ref):
    project = make_project(tmp_path)
    out = caliper("report", ref, cwd=project)
    assert out.returncode == 0, out.stderr
    expected = "18-01-33Z" if ref.endswith(".json") else "19-00-00Z"
    assert f"run 2026-11-30T{expected}" in out.stdout


def test_report_from_a_subfolder_finds_the_same_runs(tmp_path):
    project = make_project(tmp_path)
    sub = project / "deeper" / "still"
    sub.mkdir(parents=True)
    out = caliper("report", "other", cwd=sub)
    assert out.returncode == 0, out.stderr
    assert "CALIPER  —  other" in out.stdout


def test_report_verbose_adds_pass_at_k(tmp_path):
    project = make_project(tmp_path)
    out = caliper("report", "demo", "--verbose", cwd=project)
    assert "pass@k" in out.stdout and "pass^k" in out.stdout


def test_report_json_carries_derived_blocks(tmp_path):
    project = make_project(tmp_path)
    out = caliper(
        "report", ".caliper/results/demo/2026-11-30T18-01-33Z.json", "--format", "json", cwd=project
    )
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["meta"]["run_id"] == "2026-11-30T18-01-33Z"
    assert data["tasks"][0]["attempts"][0]["outcome"] == "pass"
    assert data["scores"]["tasks"][0]["score"] == pytest.approx(1 / 3)
    assert data["scores"]["tasks"][0]["pass_at_k"] == pytest.approx(1 - (2 / 3) ** 3)
    assert data["scores"]["score"] == pytest.approx((1 / 3 + 1) / 2)
    assert data["usage_totals"]["tokens_in"] == 5 * 1250
    assert data["usage_totals"]["tokens_out"] == 5 * 100


def test_report_unknown_spec_lists_what_exists(tmp_path):
    project = make_project(tmp_path)
    out = caliper("report", "demmo", cwd=project)
    assert out.returncode == 2
    assert "No saved run for spec 'demmo'" in out.stderr
    assert "Did you mean 'demo'?" in out.stderr
    assert "demo, other" in out.stderr
    assert "Traceback" not in out.stderr


def test_report_corrupt_file_is_a_clear_error(tmp_path):
    project = make_project(tmp_path)
    bad = project / ".caliper" / "results" / "demo" / "2026-11-30T20-00-00Z.json"
    bad.write_text('{"meta": ')
    out = caliper("report", "demo", cwd=project)
    assert out.returncode == 2
    assert "is not a readable caliper results file: it is not valid JSON" in out.stderr
    assert "Traceback" not in out.stderr


def test_report_with_no_caliper_folder(tmp_path):
    out = caliper("report", cwd=tmp_path)
    assert out.returncode == 2
    assert "No .caliper/ directory at or above" in out.stderr


def test_report_help_documents_exit_codes():
    out = caliper("report", "--help", cwd=Path.cwd())
    assert "Exit codes" in out.stdout and "--format" in out.stdout


def test_report_with_an_empty_caliper_folder(tmp_path):
    (tmp_path / ".caliper").mkdir()
    out = caliper("report", cwd=tmp_path)
    assert out.returncode == 2
    assert "There are no saved runs under" in out.stderr
