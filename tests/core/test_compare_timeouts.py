"""Timeouts count as failed attempts by default; a run saved with ``--timeouts unusable``
leaves them out; compare warns when the share of unusable attempts differs between the sides.

The issue's case, through the real ``caliper compare``: 5 tasks x k=20, before 14 pass + 6
fail each, after the same 14 pass + 6 ``timeout``. Counting the timeouts as failures the two
sides are identical (70% -> 70%); leaving them out, the after side reads 100% and the share of
attempts left out jumps 0/100 -> 30/100, which compare must flag.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_results_support import INFRA, TIMEOUT, F, P, caliper, run, task

from caliper.results import codec
from caliper.results.compare import compare_runs
from caliper.results.scoring import score_run, score_task


def _pair(tmp_path: Path, after_policy: str = "failure", before_policy: str = "failure"):
    before = run(
        [task(f"t{i}", [P] * 14 + [F] * 6) for i in range(5)], k=20, timeouts=before_policy
    )
    after = run(
        [task(f"t{i}", [P] * 14 + [TIMEOUT] * 6) for i in range(5)],
        k=20,
        run_id="2026-11-30T19-00-00Z",
        timeouts=after_policy,
    )
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(codec.dumps(before))
    b.write_text(codec.dumps(after))
    return a, b


def test_a_failure_turned_into_a_timeout_is_not_an_improvement(tmp_path):
    a, b = _pair(tmp_path)
    done = caliper("compare", str(a), str(b), "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["a_overall"] == pytest.approx(0.7) and data["b_overall"] == pytest.approx(0.7)
    assert data["overall_verdict"] == "no change"
    assert all(t["verdict"] == "no change" for t in data["tasks"])
    assert not any("unusable attempts differ" in w for w in data["warnings"])


def test_timeouts_left_out_by_choice_warn_in_every_format(tmp_path):
    a, b = _pair(tmp_path, after_policy="unusable")
    done = caliper("compare", str(a), str(b), "--format", "json", cwd=tmp_path)
    data = json.loads(done.stdout)
    assert data["b_overall"] == pytest.approx(1.0)  # what the user opted into
    # 0/100 vs 30/100 left out: every one of the 5 tasks goes 0/20 -> 6/20, far from noise
    warned = [w for w in data["warnings"] if "unusable attempts differ" in w]
    assert warned and "0/100 → 30/100" in warned[0]
    assert any("timeouts are scored differently: failure → unusable" in w for w in data["warnings"])
    text = caliper("compare", str(a), str(b), cwd=tmp_path).stdout
    assert "unusable attempts differ" in text
    markdown = caliper("compare", str(a), str(b), "--format", "markdown", cwd=tmp_path).stdout
    assert "unusable attempts differ" in markdown
    page = tmp_path / "c.html"
    caliper("compare", str(a), str(b), "--format", "html", "-o", str(page), cwd=tmp_path)
    assert "unusable attempts differ" in page.read_text()
    junit = tmp_path / "c.xml"
    caliper("compare", str(a), str(b), "--junit", str(junit), cwd=tmp_path)
    assert "unusable attempts differ" in junit.read_text()
    from gate_support import JUNIT_SCHEMA

    JUNIT_SCHEMA.validate(str(junit))


def test_infra_errors_stay_out_of_the_denominator_and_are_tested_between_sides():
    before = run([task(f"t{i}", [P] * 7 + [F] * 3) for i in range(5)], k=10)
    after = run([task(f"t{i}", [P] * 7 + [INFRA] * 3) for i in range(5)], k=10, run_id="b")
    comparison = compare_runs(before, after)
    assert comparison.b_overall == pytest.approx(1.0)  # the provider's fault, not the skill's
    assert any("unusable attempts differ" in w for w in comparison.warnings)


def test_scoring_counts_a_timeout_as_a_failure_unless_the_run_opted_out():
    scored = score_task(task("t", [P, TIMEOUT, F, INFRA]))
    assert (scored.usable, scored.successes, scored.unusable, scored.timeouts) == (3, 1, 1, 1)
    assert scored.score == pytest.approx(1 / 3)
    left_out = score_task(task("t", [P, TIMEOUT, F, INFRA]), timeouts="unusable")
    assert (left_out.usable, left_out.unusable, left_out.timeouts_counted) == (2, 2, False)
    # the run's saved policy decides for report and compare
    opted = run([task("t", [P, TIMEOUT])], timeouts="unusable")
    assert score_run(opted).score == 1.0
    assert score_run(run([task("t", [P, TIMEOUT])])).score == 0.5


def test_an_old_file_without_the_field_counts_timeouts_as_failures(tmp_path):
    path = tmp_path / "old.json"
    data = json.loads(codec.dumps(run([task("t", [P, TIMEOUT, P])])))
    del data["meta"]["timeouts"]
    path.write_text(json.dumps(data))
    done = caliper("report", str(path), "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["scores"]["tasks"][0]["usable"] == 3


@pytest.mark.parametrize(("flag", "usable", "score"), [((), 2, 0.5), (("unusable",), 1, 1.0)])
def test_run_records_the_timeouts_flag_and_report_follows_it(tmp_path, flag, usable, score):
    from caliper_fakeagent.harness import Workspace

    space = Workspace.create(tmp_path)
    spec = space.spec(
        "tasks:\n"
        '  - name: slow\n    prompt: "fake: sleep 30"\n    assert: "assert True"\n'
        '  - name: quick\n    prompt: "fake: say hi"\n    assert: "assert True"\n'
    )
    args = ("--timeouts", *flag) if flag else ()
    result = space.run(spec, "--k", "1", "--timeout", "1.5", *args)
    meta = result.results["meta"]
    assert meta["timeouts"] == (flag[0] if flag else "failure")
    out = caliper("report", str(result.results_path), "--format", "json", cwd=space.root)
    assert out.returncode == 0, out.stderr
    scores = json.loads(out.stdout)["scores"]
    assert sum(t["usable"] for t in scores["tasks"]) == usable
    assert scores["score"] == pytest.approx(score if flag else 0.5)
