"""Comparing two runs: matching, deltas, regressions, unmeasured sides and warnings."""

from __future__ import annotations

import json
import math
import random

import pytest
from test_results_support import INFRA, JUDGE, NC, F, P, run, snapshot, task

from caliper.plugin.attempt import Usage
from caliper.results.compare import compare_runs, comparison_data, same_run


def rows(comparison):
    return {t.name: t for t in comparison.tasks}


def test_tasks_match_by_name_whatever_the_order():
    a = run([task("one", [P, F, F]), task("two", [P, P, P]), task("gone", [P])])
    b = run([task("new", [P]), task("two", [P, P, F]), task("one", [P, P, P])], run_id="b")
    comparison = compare_runs(a, b)
    assert [t.name for t in comparison.tasks] == ["one", "two"]
    assert comparison.only_in_a == ["gone"]
    assert comparison.only_in_b == ["new"]
    one, two = rows(comparison)["one"], rows(comparison)["two"]
    assert one.delta == pytest.approx(2 / 3) and not one.regression
    # 3/3 -> 2/3 is a drop, but one noise explains (Fisher p = 1): never a regression
    assert two.delta == pytest.approx(-1 / 3) and not two.regression
    assert two.verdict == "not significant"
    assert not comparison.has_regression
    assert one.a_outcomes == ["pass", "task_fail", "task_fail"]


def test_headline_averages_tasks_measured_on_both_sides():
    a = run([task("x", [P, F]), task("y", [JUDGE, INFRA]), task("z", [P])])
    b = run([task("x", [P, P]), task("y", [P, P]), task("z", [JUDGE])], run_id="b")
    comparison = compare_runs(a, b)
    assert comparison.matched_measured == 1
    assert comparison.a_overall == 0.5
    assert comparison.b_overall == 1.0
    assert comparison.delta == 0.5


def test_an_unmeasured_side_is_never_a_regression():
    a = run([task("x", [P, P, P])])
    b = run([task("x", [INFRA, INFRA, JUDGE])], run_id="b")
    comparison = compare_runs(a, b)
    x = comparison.tasks[0]
    assert x.a_score == 1.0 and x.b_score is None
    assert x.delta is None and not x.regression
    assert not comparison.has_regression
    assert comparison.delta is None


def test_equal_scores_are_not_a_regression():
    a = run([task("x", [P, F, F])])
    b = run([task("x", [F, P, F])], run_id="b")
    assert not compare_runs(a, b).has_regression


def test_activation_regression_is_kept_apart():
    # activation 10/10 -> 0/10 (Fisher p ~ 1e-5) while success stays 10/10
    a = run([task("x", [P] * 10, expected=["my-skill"], activated=[["my-skill"]] * 10)])
    b = run([task("x", [P] * 10, expected=["my-skill"], activated=[[]] * 10)], run_id="b")
    comparison = compare_runs(a, b)
    x = comparison.tasks[0]
    assert x.activation_delta == -1.0 and x.activation_regression
    # 0/10 vs 10/10 with continuity-corrected score limits: 10/10's lower limit l solves
    # |1 − l| − 1/20 = z·sqrt(l(1 − l)/10), l = 0.65546, and 0/10's upper is 1 − l, so the
    # upper end is −1 + sqrt(2)·(1 − l) = −0.51275
    assert x.activation_delta_interval.low == pytest.approx(-1.0)
    assert x.activation_delta_interval.high == pytest.approx(-0.51275, abs=1e-4)
    assert x.activation_p_value == pytest.approx(2 / math.comb(20, 10))  # Fisher, extreme table
    assert comparison.has_activation_regression
    assert not comparison.has_regression


def test_a_small_activation_drop_is_not_significant():
    a = run([task("x", [P, P], expected=["my-skill"], activated=[["my-skill"], ["my-skill"]])])
    b = run([task("x", [P, P], expected=["my-skill"], activated=[["my-skill"], []])], run_id="b")
    x = compare_runs(a, b).tasks[0]
    assert x.activation_delta == -0.5 and not x.activation_regression
    assert x.activation_verdict == "not significant"


def test_usage_deltas_are_reported_but_never_regressions():
    a = run([task("x", [P], usage=Usage(1000, 0, 0, 0), duration=10.0)])
    b = run([task("x", [P], usage=Usage(3000, 0, 0, 0), duration=30.0)], run_id="b")
    comparison = compare_runs(a, b)
    assert comparison.usage.tokens_delta == 2000
    assert comparison.usage.tokens_delta_pct == 2.0
    assert comparison.usage.wall_delta == 20.0
    assert not comparison.has_regression


def test_ablation_pair_is_titled_by_what_was_left_out():
    skills = [snapshot("my-skill", ablated=True), snapshot("other")]
    a = run([task("x", [F])], skills=skills, ablated=["my-skill"])
    b = run([task("x", [P])], run_id="b")
    comparison = compare_runs(a, b)
    assert comparison.title == "without my-skill → full neighbourhood"
    assert any("ablation differs" in w for w in comparison.warnings)


def test_plain_pair_is_titled_by_run_ids():
    a = run([task("x", [F])], run_id="2026-11-30T18-01-33Z")
    b = run([task("x", [P])], run_id="2026-11-30T19-00-00Z")
    comparison = compare_runs(a, b)
    assert comparison.title == "2026-11-30T18-01-33Z → 2026-11-30T19-00-00Z"
    assert comparison.warnings == []


def test_warnings_for_k_spec_engine_and_neighbourhood():
    a = run([task("x", [P])], k=3, skills=[snapshot("my-skill"), snapshot("old")])
    b = run(
        [task("x", [P])],
        run_id="b",
        k=5,
        spec_hash="hash-2",
        model="claude-haiku-5",
        judge_backend="codex",
        skills=[snapshot("my-skill"), snapshot("new")],
    )
    text = "\n".join(compare_runs(a, b).warnings)
    assert "different k: 3 → 5" in text
    assert "the spec file changed" in text
    assert "added new" in text and "removed old" in text
    assert "different engine: claude-code:claude-sonnet-5 → claude-code:claude-haiku-5" in text
    assert "different judge" in text


def test_different_spec_names_warn():
    a = run([task("x", [P])], spec_name="one")
    b = run([task("x", [P])], spec_name="two", run_id="b")
    assert "different specs: one → two" in compare_runs(a, b).warnings


def test_skill_drift_warns_for_git_and_notes_path():
    a = run(
        [task("x", [P])],
        skills=[snapshot("tdd", kind="git", ref="a1b2c3d4"), snapshot("mine", ref="4fc7951")],
    )
    b = run(
        [task("x", [P])],
        run_id="b",
        skills=[snapshot("tdd", kind="git", ref="e4f5a6b7"), snapshot("mine", ref="bcbcbde")],
    )
    comparison = compare_runs(a, b)
    drift = {d.name: d for d in comparison.skill_drift}
    assert drift["tdd"].source_kind == "git" and drift["tdd"].warn
    assert (drift["tdd"].a_ref, drift["tdd"].b_ref) == ("a1b2c3d4", "e4f5a6b7")
    assert drift["mine"].source_kind == "path" and not drift["mine"].warn
    warnings = "\n".join(comparison.warnings)
    assert "tdd changed between runs (git source, a1b2c3d → e4f5a6b)" in warnings
    assert "mine" not in warnings


def test_unchanged_members_have_no_drift():
    assert compare_runs(run([task("x", [P])]), run([task("x", [P])], run_id="b")).skill_drift == []


def test_same_run_is_detected():
    a = run([task("x", [P])])
    assert same_run(a, run([task("x", [F])]))
    assert not same_run(a, run([task("x", [P])], run_id="other"))


def test_trigger_only_tasks_compare_on_activation():
    a = run([task("probe", [NC, NC], expected=["n"], activated=[["n"], []])])
    b = run([task("probe", [NC, NC], expected=["n"], activated=[["n"], ["n"]])], run_id="b")
    probe = compare_runs(a, b).tasks[0]
    assert probe.delta is None and not probe.regression
    assert probe.activation_delta == 0.5


def test_json_form_has_every_block():
    a = run([task("x", [P] * 10), task("only-a", [P])])
    b = run([task("x", [F] * 10)], run_id="b")
    data = json.loads(json.dumps(comparison_data(compare_runs(a, b, a_path="A", b_path="B"))))
    assert data["has_regression"] is True
    assert data["has_activation_regression"] is False
    assert data["tasks"][0]["regression"] is True
    assert data["only_in_a"] == ["only-a"]
    assert data["a_path"] == "A"
    assert "total_tokens" in data["a_usage"]
    assert {"warnings", "skill_drift", "usage"} <= set(data)


def test_an_overall_drop_can_be_supported_when_no_single_task_is():
    # five tasks 5/5 -> 3/5: each task alone is noise (Fisher p = 0.44), the run is not
    a = run([task(f"t{i}", [P] * 5) for i in range(5)])
    b = run([task(f"t{i}", [P, P, P, F, F]) for i in range(5)], run_id="b")
    comparison = compare_runs(a, b)
    assert all(t.verdict == "not significant" for t in comparison.tasks)
    assert comparison.tasks[0].p_value == pytest.approx(0.4444, abs=1e-4)
    assert comparison.overall_verdict == "regressed" and comparison.overall_regression
    assert comparison.has_regression
    assert comparison.delta == pytest.approx(-0.4)
    assert comparison.delta_interval.high < 0


def test_the_whole_run_is_tested_first_at_full_level_then_tasks_with_holm():
    a = run([task("a", [P] * 10), task("b", [P] * 10), task("c", [P] * 10)])
    b = run([task("a", [F] * 10), task("b", [P] * 10), task("c", [P] * 9 + [F])], run_id="b")
    comparison = compare_runs(a, b)
    by_name = rows(comparison)
    # Fisher, two-sided: 10/10 vs 0/10 has p = 2 / C(20, 10); 10/10 vs 9/10 has p = 1
    p_a = 2 / math.comb(20, 10)
    assert by_name["a"].p_value == pytest.approx(p_a)
    assert by_name["c"].p_value == pytest.approx(1.0)
    # the whole run is judged at the full level: its adjusted p is its own p
    assert comparison.p_adjusted == comparison.p_value
    # tasks: Holm over the three tasks (not four), and never below the whole-run p
    assert by_name["a"].p_adjusted == pytest.approx(max(3 * p_a, comparison.p_value))
    assert by_name["b"].p_adjusted == pytest.approx(1.0)
    assert by_name["a"].regression and not by_name["c"].regression
    assert comparison.correction == "gatekeeping-holm" and comparison.alpha == pytest.approx(0.05)


def test_no_task_is_called_changed_unless_the_whole_run_test_rejects():
    # one task drops 10/10 -> 3/10 (Fisher p = 0.0031 < 0.05 / 1), but nine others are
    # unchanged at 5/10, so the whole-run mean moves by 7 pts only: the gate stays shut
    before = [task("drop", [P] * 10)] + [task(f"t{i}", [P] * 5 + [F] * 5) for i in range(9)]
    after = [task("drop", [P] * 3 + [F] * 7)] + [task(f"t{i}", [P] * 5 + [F] * 5) for i in range(9)]
    comparison = compare_runs(run(before), run(after, run_id="b"))
    assert comparison.p_value > 0.05
    drop = rows(comparison)["drop"]
    assert drop.p_value < 0.005
    assert drop.p_adjusted >= comparison.p_value > 0.05
    assert drop.verdict == "not significant" and not comparison.has_regression


def test_a_lower_confidence_calls_more_changes():
    a = run([task("x", [P] * 6)])
    b = run([task("x", [P, P, F, F, F, F])], run_id="b")  # Fisher p = 0.061
    assert not compare_runs(a, b).has_regression
    assert compare_runs(a, b, confidence=0.9).has_regression


def test_sides_that_are_partial_or_never_started_make_a_pair_not_comparable():
    good = run([task("x", [P, P, P])])
    partial = run([task("x", [P])], run_id="b", partial=True, stop_reason="interrupted (Ctrl-C)")
    never = run(
        [task("x", [INFRA])],
        run_id="c",
        partial=True,
        stop_reason="the agent CLI cannot log in: not logged in",
    )
    empty = run([], run_id="d")
    comparison = compare_runs(good, partial)
    assert comparison.a_side.complete and comparison.b_side.state == "partial"
    assert comparison.b_side.reason == "interrupted (Ctrl-C)"
    assert not comparison.comparable
    never_side = compare_runs(good, never).b_side
    assert never_side.state == "never started" and "cannot log in" in never_side.reason
    assert compare_runs(never, good).a_side.state == "never started"
    assert compare_runs(good, empty).b_side.reason == "no attempt ran"
    assert compare_runs(good, run([task("x", [P])], run_id="e")).comparable


def test_ablation_pair_names_what_the_skill_adds():
    skills = [snapshot("my-skill", ablated=True)]
    a = run(
        [task(f"t{i}", [F] * 8 + [P] * 2) for i in range(3)], skills=skills, ablated=["my-skill"]
    )
    b = run([task(f"t{i}", [P] * 8 + [F] * 2) for i in range(3)], run_id="b")
    comparison = compare_runs(a, b)
    assert comparison.ablation == "my-skill"
    from caliper.report.compare_view import ablation_headline

    headline = ablation_headline(comparison)
    assert headline.startswith("my-skill adds +60 pts [+")
    assert "p<0.001" in headline and "not significant" not in headline
    reverse = compare_runs(b, a)
    assert reverse.ablation is None and reverse.ablation_removed == "my-skill"
    assert ablation_headline(reverse).startswith("without my-skill: −60 pts [")
    plain = compare_runs(b, run([task("t0", [P] * 3)], run_id="c"))
    assert ablation_headline(plain) is None


def test_sensitivity_says_what_the_pair_could_detect():
    a = run([task(f"t{i}", [P, P, F]) for i in range(5)])
    b = run([task(f"t{i}", [P, F, F]) for i in range(5)], run_id="b")
    sens = compare_runs(a, b).sensitivity
    assert sens.tasks == 5 and sens.tests == 5  # Holm covers the tasks; the run is first
    assert sens.task_drop is None  # Fisher at k=3 cannot reject at all
    assert 0.3 < sens.overall_drop < 0.67
    assert sens.k_needed is not None and sens.k_needed > 3
    assert sens.target_drop == pytest.approx(0.33)


def _excludes_zero(interval) -> bool:
    if interval.method.endswith(", excluding 0"):
        return True  # cut at 0 and open there
    return not interval.low <= 0.0 <= interval.high


def test_zero_to_three_of_three_interval_agrees_with_not_significant():
    # Fisher, two-sided: 0/3 vs 3/3 has p = 2 / C(6, 3) = 0.1: not significant, so the Δ
    # interval beside it must reach 0 (Newcombe's alone is [+21, +100])
    comparison = compare_runs(run([task("x", [F] * 3)]), run([task("x", [P] * 3)], run_id="b"))
    row = rows(comparison)["x"]
    assert row.p_value == pytest.approx(0.1) and row.verdict == "not significant"
    assert row.delta_interval.low <= 0.0 <= row.delta_interval.high
    assert comparison.delta_interval.low <= 0.0 <= comparison.delta_interval.high


def test_every_delta_interval_agrees_with_its_verdict_over_a_grid_of_tables():
    """One task, every table with 1..8 tries a side (at 95% and 90%); several tasks, seeded
    random tables: the interval excludes 0 exactly when the verdict is a supported change."""
    for confidence in (0.95, 0.9):
        for na in range(1, 9):
            for nb in range(1, 9):
                for xa in range(na + 1):
                    for xb in range(nb + 1):
                        a = run([task("x", [P] * xa + [F] * (na - xa))])
                        b = run([task("x", [P] * xb + [F] * (nb - xb))], run_id="b")
                        c = compare_runs(a, b, confidence=confidence)
                        row = rows(c)["x"]
                        changed = row.verdict in ("regressed", "improved")
                        assert _excludes_zero(row.delta_interval) is changed, (xa, na, xb, nb)
                        assert _excludes_zero(c.delta_interval) is changed
    rng = random.Random(7)
    for _ in range(300):
        tasks = rng.randint(2, 6)
        k = rng.choice([3, 5, 10])
        chances = [(rng.random(), rng.random()) for _ in range(tasks)]
        a = run(
            [
                task(f"t{i}", [P if rng.random() < pa else F for _ in range(k)])
                for i, (pa, _) in enumerate(chances)
            ]
        )
        b = run(
            [
                task(f"t{i}", [P if rng.random() < pb else F for _ in range(k)])
                for i, (_, pb) in enumerate(chances)
            ],
            run_id="b",
        )
        c = compare_runs(a, b)
        changed = c.overall_verdict in ("regressed", "improved")
        assert _excludes_zero(c.delta_interval) is changed
        for row in c.tasks:
            row_changed = row.verdict in ("regressed", "improved")
            assert _excludes_zero(row.delta_interval) is row_changed
