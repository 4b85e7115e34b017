"""``caliper compare`` through the real console script: output and exit codes."""

from __future__ import annotations

import json
import os

from test_results_support import INFRA, F, P, caliper, make_project, run, snapshot, task

from caliper.results.store import save_run

FIRST = ".caliper/results/demo/2026-11-30T18-01-33Z.json"
SECOND = ".caliper/results/demo/2026-11-30T19-00-00Z.json"


def save_in(project, results):
    previous = os.getcwd()
    os.chdir(project)
    try:
        return save_run(results, spec_path=project / f"{results.meta.spec_name}.eval.yaml")
    finally:
        os.chdir(previous)


def test_improvement_exits_zero(tmp_path):
    project = make_project(tmp_path)
    out = caliper("compare", FIRST, SECOND, cwd=project)
    assert out.returncode == 0, out.stderr
    assert "33.3% → 100.0%" in out.stdout
    assert "No regression." in out.stdout


def test_regression_exits_one(tmp_path):
    project = make_project(tmp_path)
    out = caliper("compare", SECOND, FIRST, cwd=project)
    assert out.returncode == 1, out.stderr
    assert "Regression in 1 task(s): Writes a commit" in out.stdout


def test_unmeasured_side_exits_zero(tmp_path):
    project = make_project(tmp_path)
    save_in(
        project,
        run(
            [task("Writes a commit", [INFRA, INFRA, INFRA]), task("Config", [P, P])],
            run_id="2026-11-30T20-00-00Z",
        ),
    )
    out = caliper("compare", SECOND, "demo", cwd=project)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Not measured on both sides (left out of Δ): Writes a commit" in out.stdout


def test_json_format_for_scripts(tmp_path):
    project = make_project(tmp_path)
    out = caliper("compare", SECOND, FIRST, "--format", "json", cwd=project)
    assert out.returncode == 1
    data = json.loads(out.stdout)
    assert data["has_regression"] is True
    assert data["a_run_id"] == "2026-11-30T19-00-00Z"
    assert data["b_run_id"] == "2026-11-30T18-01-33Z"
    rows = {t["name"]: t for t in data["tasks"]}
    assert rows["Writes a commit"]["regression"] is True
    assert rows["Config"]["regression"] is False


def test_ablation_pair_by_spec_name_and_path(tmp_path):
    project = make_project(tmp_path)
    save_in(
        project,
        run(
            [task("Writes a commit", [F, F, F])],
            run_id="2026-11-30T21-00-00Z",
            skills=[snapshot("my-skill", ablated=True)],
            ablated=["my-skill"],
        ),
    )
    out = caliper("compare", "demo", SECOND, cwd=project)
    assert out.returncode == 0, out.stderr
    assert "without my-skill → full neighbourhood" in out.stdout
    assert "Only in after: Config" in out.stdout


def test_same_run_twice_is_a_usage_error(tmp_path):
    project = make_project(tmp_path)
    out = caliper("compare", "demo", SECOND, cwd=project)
    assert out.returncode == 2
    assert "Both sides are the same run" in out.stderr


def test_a_copy_of_the_same_run_is_refused(tmp_path):
    project = make_project(tmp_path)
    (project / "copy.json").write_text((project / SECOND).read_text())
    out = caliper("compare", SECOND, "copy.json", cwd=project)
    assert out.returncode == 2
    assert "hold the same run" in out.stderr


def test_missing_run_is_a_usage_error_not_a_regression(tmp_path):
    project = make_project(tmp_path)
    out = caliper("compare", "demo", "nothere", cwd=project)
    assert out.returncode == 2
    assert "No saved run for spec 'nothere'" in out.stderr
    corrupt = project / "broken.json"
    corrupt.write_text("{}")
    out = caliper("compare", "demo", "broken.json", cwd=project)
    assert out.returncode == 2
    assert "not a caliper results file" in out.stderr
    out = caliper("compare", "demo", cwd=project)
    assert out.returncode == 2  # click's own usage error


def test_help_documents_exit_codes(tmp_path):
    out = caliper("compare", "--help", cwd=tmp_path)
    for line in ("0  no task regressed", "1  at least one task regressed", "2  usage error"):
        assert line in out.stdout


def test_runs_saved_by_caliper_run_round_trip(tmp_path):
    """Two real `caliper run`s (the fake agent), then report, list and compare read them."""
    from caliper_fakeagent.harness import Workspace

    space = Workspace.create(tmp_path)
    space.skill("greeter")
    spec = space.spec("""\
        skills:
          - ./skills/greeter
        tasks:
          - name: writes the file
            prompt: |
              fake: load greeter
              fake: write out.txt hello
              fake: usage 11 7 3 2
            assert: |
              from pathlib import Path
              assert Path("out.txt").read_text().strip() == "hello"
            activates: [greeter]
        """)
    full = space.run(spec, "--k", "2")
    assert full.returncode == 0, full.stderr
    bare = space.run(spec, "--k", "2", "--ablate", "greeter")
    assert bare.results_path is not None and bare.results_path != full.results_path
    env = space.env()
    listing = caliper("list", "demo", "--format", "json", cwd=space.root, env=env)
    assert listing.returncode == 0, listing.stderr
    rows = json.loads(listing.stdout)
    assert [r["ablated"] for r in rows] == [["greeter"], []]
    assert rows[1]["engine"].startswith("fake")
    report = caliper("report", str(full.results_path), "--format", "json", cwd=space.root, env=env)
    data = json.loads(report.stdout)
    assert data["scores"]["tasks"][0]["successes"] == 2
    assert data["usage_totals"]["tokens_in"] == 2 * (11 + 3 + 2)
    out = caliper(
        "compare", str(bare.results_path), str(full.results_path), cwd=space.root, env=env
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "without greeter → full neighbourhood" in out.stdout
