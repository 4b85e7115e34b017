"""The pure bar logic of `caliper.results.gate`: parsing, the three cases, the policy."""

from __future__ import annotations

import pytest

from caliper.results.gate import (
    ACTIVATION,
    SCORE,
    Bar,
    BarSyntaxError,
    BarVerdict,
    InconclusivePolicy,
    Measured,
    check_bar_tasks,
    counts_as_pass,
    evaluate_gate,
    judge_bar,
    parse_bar,
)
from caliper.results.stats import Interval


def interval(low: float, high: float) -> Interval:
    return Interval(low=low, high=high, level=0.95, method="wilson")


@pytest.mark.parametrize(
    ("low", "high", "threshold", "verdict"),
    [
        (0.84, 1.0, 0.8, BarVerdict.MET),
        (0.8, 1.0, 0.8, BarVerdict.MET),  # a lower bound exactly at the bar clears it
        (0.0, 0.28, 0.8, BarVerdict.FAILED),
        (0.5, 0.79999, 0.8, BarVerdict.FAILED),
        (0.5, 0.8, 0.8, BarVerdict.INCONCLUSIVE),  # the upper bound touches the bar
        (0.58, 0.92, 0.8, BarVerdict.INCONCLUSIVE),
        (0.0, 1.0, 0.0, BarVerdict.MET),
        (0.7, 1.0, 1.0, BarVerdict.INCONCLUSIVE),
    ],
)
def test_judge_bar_cases(low: float, high: float, threshold: float, verdict: BarVerdict) -> None:
    assert judge_bar(threshold, interval(low, high)) is verdict


def test_nothing_measured_is_unmeasured_and_never_passes() -> None:
    assert judge_bar(0.5, None) is BarVerdict.UNMEASURED
    for policy in InconclusivePolicy:
        assert not counts_as_pass(BarVerdict.UNMEASURED, policy)


def test_policy_decides_only_inconclusive() -> None:
    assert counts_as_pass(BarVerdict.MET, InconclusivePolicy.FAIL)
    assert not counts_as_pass(BarVerdict.FAILED, InconclusivePolicy.PASS)
    assert counts_as_pass(BarVerdict.INCONCLUSIVE, InconclusivePolicy.PASS)
    assert not counts_as_pass(BarVerdict.INCONCLUSIVE, InconclusivePolicy.FAIL)


@pytest.mark.parametrize(
    ("text", "bar"),
    [
        ("0.8", Bar(SCORE, 0.8, None)),
        ("80%", Bar(SCORE, 0.8, None)),
        ("1", Bar(SCORE, 1.0, None)),
        ("writes a file=0.9", Bar(SCORE, 0.9, "writes a file")),
        ("x = y=0.5", Bar(SCORE, 0.5, "x = y")),  # split at the last '='
        ("a=b=75%", Bar(SCORE, 0.75, "a=b")),
        ("  spaced name =0.25", Bar(SCORE, 0.25, "  spaced name ")),
    ],
)
def test_parse_bar(text: str, bar: Bar) -> None:
    assert parse_bar(text, SCORE) == bar


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("high", "is not a number"),
        ("1.5", "must lie between 0 and 1"),
        ("-0.1", "must lie between 0 and 1"),
        ("nan", "must lie between 0 and 1"),
        ("task=", "is not a number"),
        ("task=2", "must lie between 0 and 1"),
        ("=0.5", "task name before '=' is empty"),
    ],
)
def test_parse_bar_errors(text: str, message: str) -> None:
    with pytest.raises(BarSyntaxError, match=message):
        parse_bar(text, SCORE)


def test_parse_bar_names_its_flag() -> None:
    with pytest.raises(BarSyntaxError, match="--min-activation"):
        parse_bar("lots", ACTIVATION)


def test_unknown_task_gets_did_you_mean() -> None:
    expected = r"no task named 'writes a fle'\. Did you mean 'writes a file'\?"
    with pytest.raises(BarSyntaxError, match=expected):
        check_bar_tasks([Bar(SCORE, 0.5, "writes a fle")], ["writes a file", "other"], [])


def test_activation_bar_needs_activates() -> None:
    check_bar_tasks([Bar(ACTIVATION, 0.5, "t")], ["t"], ["t"])
    with pytest.raises(BarSyntaxError, match="has no activates: check"):
        check_bar_tasks([Bar(ACTIVATION, 0.5, "t")], ["t"], [])
    with pytest.raises(BarSyntaxError, match="no task of the spec has an activates"):
        check_bar_tasks([Bar(ACTIVATION, 0.5, None)], ["t"], [])


def test_evaluate_gate_policies() -> None:
    bars = [Bar(SCORE, 0.7, "met"), Bar(SCORE, 0.7, "unsure")]
    measure = {
        (SCORE, "met"): Measured(1.0, interval(0.72, 1.0), 10, 10),
        (SCORE, "unsure"): Measured(0.7, interval(0.40, 0.89), 7, 10),
    }
    strict = evaluate_gate(bars, measure, policy=InconclusivePolicy.FAIL, confidence=0.95)
    assert [r.verdict for r in strict.bars] == [BarVerdict.MET, BarVerdict.INCONCLUSIVE]
    assert not strict.passed and [r.bar.task for r in strict.failures] == ["unsure"]
    lenient = evaluate_gate(bars, measure, policy=InconclusivePolicy.PASS, confidence=0.95)
    assert lenient.passed
    data = strict.to_json()
    assert data["inconclusive"] == "fail" and data["passed"] is False
    assert data["bars"][1]["verdict"] == "inconclusive"
    assert data["bars"][1]["interval"]["low"] == 0.40
    assert "straddles 70%" in data["bars"][1]["reason"]


def test_a_bar_on_a_task_never_run_is_unmeasured() -> None:
    gate = evaluate_gate([Bar(SCORE, 0.5, "gone")], {}, confidence=0.95)
    assert gate.bars[0].verdict is BarVerdict.UNMEASURED and not gate.passed


def _adaptive_results(
    tasks: dict[str, list[bool]], activation: dict[str, list[bool]] | None = None
):
    from caliper.results.models import AttemptRecord, Outcome, RunMeta, RunResults, TaskResult

    activation = activation or {}
    meta = RunMeta(run_id="r", spec_name="s", spec_path="s.eval.yaml", started_at="x", k=20)
    meta.adaptive = {"min_k": 1, "max_k": 20}
    results = RunResults(meta)
    for index, (name, outcomes) in enumerate(tasks.items()):
        loaded = activation.get(name)
        attempts = [
            AttemptRecord(
                name,
                i,
                Outcome.PASS if ok else Outcome.TASK_FAIL,
                activation_passed=loaded[i - 1] if loaded else None,
            )
            for i, ok in enumerate(outcomes, start=1)
        ]
        results.tasks.append(
            TaskResult(name, index, 20, attempts, activation_expected=["sk"] if loaded else None)
        )
    return results


def test_sequential_bars_cross_where_the_run_stopped() -> None:
    """Straight passes against 50 %: the evidence after n passes is about 2^(n+1)/(n+1)
    (18.1 at 6, 31.9 at 7), so 1/α = 20 is first reached at the 7th pass."""
    from caliper.results.gate import sequential_verdict

    assert sequential_verdict(0.5, [True] * 7, 0.95) is BarVerdict.MET
    assert sequential_verdict(0.5, [True] * 6, 0.95) is BarVerdict.INCONCLUSIVE
    assert sequential_verdict(0.5, [False] * 7, 0.95) is BarVerdict.FAILED
    # decided at the 7th attempt, so later failures do not undo it (the run had stopped) …
    assert sequential_verdict(0.5, [True] * 7 + [False] * 3, 0.95) is BarVerdict.MET
    # … unless --min-k said not to look before the 10th: 7/10 does not decide 50 %
    assert sequential_verdict(0.5, [True] * 7 + [False] * 3, 0.95, 10) is BarVerdict.INCONCLUSIVE
    assert sequential_verdict(0.5, [], 0.95) is BarVerdict.UNMEASURED


def test_adaptive_aggregate_is_the_mean_of_bonferroni_confidence_sequences() -> None:
    """Two tasks at 7/7 and 12/12: each sequence at 1 − 0.05/2 has the closed-form lower end
    ((α/2) / (n + 1))^(1/n) after n straight passes; the aggregate's is their mean."""
    from caliper.commands.gate_options import evaluate

    results = _adaptive_results({"a": [True] * 7, "b": [True] * 12})
    gate = evaluate(results, [Bar(SCORE, 0.6)], "fail", 0.95)
    (result,) = gate.bars
    low = ((0.025 / 8) ** (1 / 7) + (0.025 / 13) ** (1 / 12)) / 2
    assert result.measured.interval.low == pytest.approx(low, abs=1e-6)  # 0.5163
    assert result.measured.interval.high == 1.0
    assert result.measured.interval.method == "confidence-sequence-mean"
    assert result.verdict is BarVerdict.INCONCLUSIVE  # 51.6 % < 60 % ≤ 100 %
    assert evaluate(results, [Bar(SCORE, 0.5)], "fail", 0.95).bars[0].verdict is BarVerdict.MET


def test_adaptive_activation_bars_use_the_sequential_test() -> None:
    from caliper.commands.gate_options import evaluate

    results = _adaptive_results({"t": [True] * 8}, activation={"t": [True] * 7 + [False]})
    (task, run) = evaluate(
        results, [Bar(ACTIVATION, 0.5, "t"), Bar(ACTIVATION, 0.9)], "fail", 0.95
    ).bars
    assert task.verdict is BarVerdict.MET and task.measured.judged_by == "sequential-test"
    assert (task.measured.successes, task.measured.trials) == (7, 8)
    assert run.measured.interval.method == "confidence-sequence-mean"
    assert run.verdict is BarVerdict.INCONCLUSIVE
