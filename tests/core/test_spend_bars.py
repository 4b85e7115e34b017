"""``--max-cost-per-attempt`` and ``--max-duration``: ceilings on a mean per attempt, judged on
the mean's Student-t interval (met at or below, failed above, Bonferroni with several bars),
exit 3 when one fails, on ``run`` and on ``report``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from caliper.plugin.attempt import Usage
from caliper.results.gate import (
    COST,
    DURATION,
    Bar,
    BarSyntaxError,
    BarVerdict,
    evaluate_gate,
    parse_bar,
)
from caliper.results.gate_spend import measure_spend
from caliper.results.models import AttemptRecord, Outcome, RunMeta, RunResults, TaskResult
from caliper_fakeagent.harness import CALIPER, Workspace

COSTLY = """\
    tasks:
      - name: costly
        prompt: |
          fake: cost 0.25
          fake: say done
        assert: "assert True"
    """


def _run(costs: list[float | None], seconds: list[float]) -> RunResults:
    attempts = [
        AttemptRecord(
            "t",
            n,
            Outcome.PASS,
            duration_seconds=s,
            usage=Usage(1, 1, 0, 0, cost) if cost is not None else Usage(1, 1, 0, 0),
        )
        for n, (cost, s) in enumerate(zip(costs, seconds, strict=True), 1)
    ]
    meta = RunMeta("r", "s", "s.eval.yaml", "2026-12-03T00:00:00Z")
    return RunResults(meta, [TaskResult("t", 0, len(attempts), attempts)])


def test_parse_accepts_the_min_score_forms_with_units() -> None:
    assert parse_bar("0.25", COST) == Bar(COST, 0.25)
    assert parse_bar("$0.25", COST) == Bar(COST, 0.25)
    assert parse_bar("hard task=$1.5", COST) == Bar(COST, 1.5, "hard task")
    assert parse_bar("90s", DURATION) == Bar(DURATION, 90.0)
    assert parse_bar("a=b=30", DURATION) == Bar(DURATION, 30.0, "a=b")
    for bad in ("-1", "nan", "cheap", "t="):
        with pytest.raises(BarSyntaxError):
            parse_bar(bad, COST)


def test_a_ceiling_is_judged_on_the_t_interval_of_the_mean() -> None:
    # agent times 10, 12, 14, 16, 18: mean 14, s = √10, t(0.975, 4) = 2.776 (table):
    # 14 ± 2.776·√10/√5 = 14 ± 3.926 → [10.074, 17.926]
    results = _run([None] * 5, [10.0, 12.0, 14.0, 16.0, 18.0])
    measure = measure_spend(results, 0.95)
    found = measure[(DURATION, None)]
    assert found.value == 14.0 and found.trials == 5
    assert found.interval is not None
    assert found.interval.low == pytest.approx(10.074, abs=1e-3)
    assert found.interval.high == pytest.approx(17.926, abs=1e-3)
    verdicts = {
        limit: evaluate_gate([Bar(DURATION, limit)], measure, confidence=0.95).bars[0].verdict
        for limit in (18.0, 17.9, 10.1, 10.0)
    }
    assert verdicts == {
        18.0: BarVerdict.MET,
        17.9: BarVerdict.INCONCLUSIVE,
        10.1: BarVerdict.INCONCLUSIVE,
        10.0: BarVerdict.FAILED,
    }
    # no cost was reported: a cost ceiling is unmeasured (and so fails)
    cost = evaluate_gate([Bar(COST, 1.0)], measure, confidence=0.95).bars[0]
    assert cost.verdict is BarVerdict.UNMEASURED and not cost.passed
    assert "no counted attempt reported a cost" in cost.reason


def test_failed_needs_the_bonferroni_level_with_several_bars() -> None:
    # two bars at 95%: the failed side uses the 97.5% interval, t(0.9875, 4) = 3.495 (table):
    # 14 − 3.495·√2 = 9.057, so 9.5 is below the 95% low end (10.074) but not the 97.5% one
    results = _run([None] * 5, [10.0, 12.0, 14.0, 16.0, 18.0])
    bars = [Bar(DURATION, 9.5), Bar(DURATION, 9.0)]
    gate = evaluate_gate(bars, measure_spend(results, 0.95, family=2), confidence=0.95)
    assert [r.verdict for r in gate.bars] == [BarVerdict.INCONCLUSIVE, BarVerdict.FAILED]


def test_one_attempt_is_inconclusive() -> None:
    measure = measure_spend(_run([0.5], [3.0]), 0.95)
    result = evaluate_gate([Bar(COST, 1.0)], measure, confidence=0.95).bars[0]
    assert result.verdict is BarVerdict.INCONCLUSIVE
    assert "no spread" in result.reason


def _report(space: Workspace, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CALIPER), "report", *args],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path)


def test_run_exits_3_when_the_cost_ceiling_fails_and_0_when_met(space: Workspace) -> None:
    spec = space.spec(COSTLY)
    failed = space.run(spec, "--k", "3", "--max-cost-per-attempt", "0.2")
    assert failed.returncode == 3, failed.stderr
    assert "cost per attempt" in failed.stderr and "Traceback" not in failed.stderr
    gate = failed.results["meta"]["gate"]
    assert gate["bars"][0]["metric"] == "cost" and gate["bars"][0]["verdict"] == "failed"
    met = space.run(spec, "--k", "3", "--max-cost-per-attempt", "costly=$0.3")
    assert met.returncode == 0, met.stderr


def test_report_judges_a_duration_ceiling_on_a_saved_run(space: Workspace) -> None:
    spec = space.spec(COSTLY)
    done = space.run(spec, "--k", "3")
    assert done.returncode == 0, done.stderr
    loose = _report(space, str(spec), "--max-duration", "3600", "--format", "json")
    assert loose.returncode == 0, loose.stderr
    assert json.loads(loose.stdout)["gate"]["bars"][0]["verdict"] == "met"
    tight = _report(space, str(spec), "--max-duration", "0")
    assert tight.returncode == 3, tight.stdout + tight.stderr
    assert "agent time per attempt" in tight.stdout + tight.stderr


def test_a_ceiling_naming_no_task_is_a_usage_error(space: Workspace) -> None:
    spec = space.spec(COSTLY)
    done = space.run(spec, "--max-duration", "cosly=10")
    assert done.returncode == 2
    assert "Did you mean 'costly'" in done.stderr
