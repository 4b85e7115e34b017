"""``caliper compare`` through the real console script: output and exit codes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
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


def test_a_drop_noise_explains_exits_zero(tmp_path):
    """2/2 -> 1/3 used to be "a regression"; Fisher's p is 0.4, so it is not one."""
    project = make_project(tmp_path)
    out = caliper("compare", SECOND, FIRST, cwd=project)
    assert out.returncode == 0, out.stderr
    assert "Writes a commit (−67 pts, not significant)" in out.stdout
    assert "Regression in" not in out.stdout


def save_pair(project, before, after):
    paths = []
    for i, tasks in enumerate((before, after)):
        paths.append(save_in(project, run(tasks, run_id=f"2026-12-01T0{i}-00-00Z", k=10)))
    return [str(p) for p in paths]


def test_a_supported_regression_exits_one(tmp_path):
    project = make_project(tmp_path)
    before, after = save_pair(
        project,
        [task("Writes a commit", [P] * 10), task("Config", [P] * 10)],
        [task("Writes a commit", [F] * 9 + [P]), task("Config", [P] * 10)],
    )
    out = caliper("compare", before, after, cwd=project)
    assert out.returncode == 1, out.stdout + out.stderr
    assert "Regression in 1 task(s): Writes a commit" in out.stdout
    assert "dropped by more than noise explains: Writes a commit" in out.stderr


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
    assert out.returncode == 0
    data = json.loads(out.stdout)
    assert data["has_regression"] is False
    assert data["a_run_id"] == "2026-11-30T19-00-00Z"
    assert data["b_run_id"] == "2026-11-30T18-01-33Z"
    rows = {t["name"]: t for t in data["tasks"]}
    commit = rows["Writes a commit"]
    assert commit["regression"] is False and commit["verdict"] == "not significant"
    assert commit["p_value"] == pytest.approx(0.4)  # Fisher, 2/2 vs 1/3
    assert set(commit["delta_interval"]) == {"low", "high", "level", "method"}
    assert commit["delta_interval"]["method"].startswith("newcombe-cc")
    assert rows["Config"]["regression"] is False and rows["Config"]["verdict"] == "no change"
    assert data["confidence"] == 0.95 and data["correction"] == "gatekeeping-holm"
    assert data["delta_interval"]["method"] == "mover-wilson-cc"
    assert data["a_side"]["complete"] is True and data["comparable"] is True


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
    for line in (
        "0  no statistically supported regression",
        "1  a supported regression",
        "2  usage error",
        "not comparable",
        "--allow-partial",
        "--fail-on",
        "--confidence",
        "--explain",
    ):
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


def test_activation_regression_fails_only_when_asked(tmp_path):
    project = make_project(tmp_path)
    loaded = [["my-skill"]] * 10
    before, after = save_pair(
        project,
        [task("Triggers", [P] * 10, expected=["my-skill"], activated=loaded)],
        [task("Triggers", [P] * 10, expected=["my-skill"], activated=[[]] * 10)],
    )
    out = caliper("compare", before, after, cwd=project)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Activation dropped in 1 task(s): Triggers" in out.stdout
    for fail_on in ("activation", "both"):
        out = caliper("compare", before, after, "--fail-on", fail_on, cwd=project)
        assert out.returncode == 1, out.stdout + out.stderr
        assert "activation dropped in Triggers" in out.stderr
    out = caliper("compare", before, after, "--fail-on", "tokens", cwd=project)
    assert out.returncode == 2


def test_score_regression_is_ignored_by_fail_on_activation(tmp_path):
    project = make_project(tmp_path)
    before, after = save_pair(
        project, [task("Writes a commit", [P] * 10)], [task("Writes a commit", [F] * 10)]
    )
    assert caliper("compare", before, after, cwd=project).returncode == 1
    out = caliper("compare", before, after, "--fail-on", "activation", cwd=project)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("bad", ["0", "1", "1.5", "nan"])
def test_compare_refuses_a_bad_confidence(tmp_path, bad):
    project = make_project(tmp_path)
    out = caliper("compare", FIRST, SECOND, "--confidence", bad, cwd=project)
    assert out.returncode == 2
    assert "--confidence" in out.stderr and "strictly between 0 and 1" in out.stderr
    assert "Traceback" not in out.stderr


def test_explain_shows_every_test_and_the_sensitivity(tmp_path):
    project = make_project(tmp_path)
    before, after = save_pair(
        project,
        [task(f"t{i}", [P] * 8 + [F] * 2) for i in range(5)],
        [task(f"t{i}", [P] * 7 + [F] * 3) for i in range(5)],
    )
    out = caliper("compare", before, after, cwd=project)
    assert out.returncode == 0, out.stderr
    footer = out.stdout.split("Sensitivity")[1]
    assert "k=10, 5 tasks, 95%, 80% power" in footer and "on every task" in footer
    out = caliper("compare", before, after, "--explain", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "How the verdict was reached" in out.stdout
    assert "(whole run)" in out.stdout and "Fisher" in out.stdout and "Holm" in out.stdout
    assert "What this pair could detect" in out.stdout
    assert "Detectable drop from 80%" in out.stdout
    assert "k needed (both sides) to catch a drop on every task of 10 pts: k=" in out.stdout


def test_a_partial_side_is_not_comparable_unless_allowed(tmp_path):
    project = make_project(tmp_path)
    before, after = save_pair(
        project,
        [task("Writes a commit", [P] * 3)],
        [task("Writes a commit", [P])],
    )
    data = json.loads(Path(after).read_text())
    data["meta"].update(partial=True, stop_reason="interrupted by Ctrl-C")
    Path(after).write_text(json.dumps(data))
    out = caliper("compare", before, after, cwd=project)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "is partial: interrupted by Ctrl-C" in out.stdout
    assert "Not comparable" in out.stdout and "Not comparable" in out.stderr
    assert "No regression" not in out.stdout
    out = caliper("compare", before, after, "--allow-partial", cwd=project)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "is partial: interrupted by Ctrl-C" in out.stdout  # still flagged
    out = caliper("compare", before, after, "--format", "json", cwd=project)
    assert out.returncode == 2
    assert json.loads(out.stdout)["comparable"] is False


def test_compare_against_a_run_that_measured_nothing(tmp_path):
    """Issue 11 item 5, as a user meets it: a good run, then a run in which no attempt gave a
    verdict (every one an infrastructure error; a login failure is no longer saved at all).
    `compare good SPEC` must not say "No regression" with exit 0, and --allow-partial cannot
    help: a run that never started has nothing to compare (exit 2, said once, no advice to
    pass the flag that was passed)."""
    from caliper_fakeagent.harness import Workspace

    space = Workspace.create(tmp_path)
    task_yaml = """\
        tasks:
          - name: writes the file
            prompt: |
              fake: {step}
            assert: "assert True"
        """
    spec = space.spec(task_yaml.format(step="say done"))
    good = space.run(spec, "--k", "3")
    assert good.returncode == 0, good.stderr
    good_copy = space.root / "good.json"
    good_copy.write_text(good.results_path.read_text())
    spec = space.spec(task_yaml.format(step="exit 2"))
    broken = space.run(spec, "--k", "2")
    assert broken.returncode == 1, broken.stderr
    broken_copy = space.root / "broken.json"
    broken_copy.write_text(broken.results_path.read_text())
    env = space.env()
    out = caliper("compare", str(good_copy), str(spec), cwd=space.root, env=env)
    assert out.returncode == 2, out.stdout + out.stderr
    assert "No regression" not in out.stdout
    assert "never started" in out.stdout and "Nothing to compare" in out.stderr
    for pair in ((str(good_copy), "demo"), (str(broken_copy), "demo")):
        if pair[0] == str(broken_copy):
            again = space.run(spec, "--k", "2")  # a second run that measured nothing
            assert again.returncode == 1, again.stderr
        out = caliper("compare", *pair, "--allow-partial", cwd=space.root, env=env)
        both = out.stdout + out.stderr
        assert out.returncode == 2, both
        assert "Nothing to compare" in out.stdout and "Nothing to compare" in out.stderr
        assert "Pass --allow-partial" not in both and "Not comparable" not in both
        assert "No regression" not in out.stdout


def test_allow_partial_gives_the_verdict_on_what_finished(tmp_path):
    """With --allow-partial the text verdict is given, not "Not comparable … Pass
    --allow-partial"."""
    from caliper_fakeagent.harness import Workspace

    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: first
            prompt: "fake: say hi"
            assert: "assert True"
          - name: second
            prompt: "fake: auth-fail"
            assert: "assert True"
        """)
    good = space.run(spec, "--k", "1", "--workers", "1")
    assert good.returncode == 3, good.stderr
    first = space.root / "first.json"
    first.write_text(good.results_path.read_text())
    again = space.run(spec, "--k", "1", "--workers", "1")
    assert again.returncode == 3, again.stderr
    out = caliper(
        "compare",
        str(first),
        str(again.results_path),
        "--allow-partial",
        cwd=space.root,
        env=space.env(),
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Partial:" in out.stdout and "--allow-partial" in out.stdout
    assert "Pass --allow-partial" not in out.stdout and "Not comparable" not in out.stdout
