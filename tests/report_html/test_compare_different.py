"""The compare page's "different from the other run" data: which attempts differ by position."""

from __future__ import annotations

from html_support import task

from caliper.report.html.compare_data import different_attempts
from caliper.results.models import Outcome

P, F, E = Outcome.PASS, Outcome.TASK_FAIL, Outcome.INFRA_ERROR


def test_same_outcomes_at_every_position_differ_nowhere() -> None:
    assert different_attempts(0, task("t", [P, F, P]), task("t", [P, F, P])) == []


def test_each_position_with_another_outcome_lists_both_sides() -> None:
    # positions 1 (F vs P) and 2 (P vs E) differ; position 0 is P on both sides
    ids = different_attempts(3, task("t", [P, F, P]), task("t", [P, P, E]))
    assert ids == ["a-t3-a1", "b-t3-a1", "a-t3-a2", "b-t3-a2"]


def test_an_attempt_without_counterpart_differs() -> None:
    assert different_attempts(1, task("t", [P]), task("t", [P, F])) == ["b-t1-a1"]
    assert different_attempts(2, task("t", [F, P]), None) == ["a-t2-a0", "a-t2-a1"]
