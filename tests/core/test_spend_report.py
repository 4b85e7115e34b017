"""Cost and agent time in the reports: the json ``spend`` block against values worked by hand,
and the text, Markdown and HTML views saying them (or that no cost was reported)."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import pytest

from caliper_fakeagent.harness import CALIPER, Workspace

TWO_COSTS = """\
    tasks:
      - name: cheap
        prompt: |
          fake: cost 0.25
          fake: say done
        assert: "assert True"
      - name: dear
        prompt: |
          fake: cost 0.5
          fake: say done
        assert: "assert False"
    """


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


def test_the_json_spend_block_matches_hand_worked_values(space: Workspace) -> None:
    spec = space.spec(TWO_COSTS)
    assert space.run(spec, "--k", "2").returncode == 0
    done = _report(space, str(spec), "--format", "json")
    assert done.returncode == 0, done.stderr
    spend = json.loads(done.stdout)["spend"]
    run = spend["run"]
    # costs 0.25, 0.25, 0.5, 0.5: median 0.375, quartiles (inclusive) 0.25 and 0.5; mean
    # 0.375, s = 0.125·√(4/3) = 0.144338, t(0.975, 3) = 3.182 (table): half-width 0.229641
    cost = run["cost_per_attempt_usd"]
    assert (cost["median"], cost["q1"], cost["q3"]) == (0.375, 0.25, 0.5)
    assert cost["mean_interval"]["low"] == pytest.approx(0.375 - 0.229641, abs=2e-4)
    assert cost["mean_interval"]["high"] == pytest.approx(0.375 + 0.229641, abs=2e-4)
    # $1.50 spent, 2 attempts passed (cheap's): $0.75 per passed attempt
    assert run["cost_total_usd"] == pytest.approx(1.5)
    assert run["cost_per_success_usd"] == pytest.approx(0.75)
    assert spend["tasks"]["dear"]["cost_per_success_usd"] is None
    assert spend["tasks"]["cheap"]["agent_seconds"]["n"] == 2


def test_the_views_show_cost_and_time(space: Workspace) -> None:
    spec = space.spec(TWO_COSTS)
    run = space.run(spec, "--k", "2")
    assert run.returncode == 0
    text = _report(space, str(spec)).stdout
    assert "$1.50 reported by 4 of 4 attempts · $0.75 per passed attempt" in text
    assert "Agent time per attempt  median" in text
    markdown = _report(space, str(spec), "--format", "markdown").stdout
    assert "### Cost and time" in markdown and "| dear |" in markdown
    page = space.root / "page.html"
    assert (
        _report(space, str(run.results_path), "--format", "html", "-o", str(page)).returncode == 0
    )
    html = page.read_text(encoding="utf-8")
    assert 'id="spend-table"' in html and "$0.75 per passed attempt" in html


def test_a_cli_without_a_cost_is_said_to_report_none(space: Workspace) -> None:
    spec = space.spec(
        'tasks:\n  - name: t\n    prompt: "fake: say hi"\n    assert: "assert True"\n'
    )
    done = space.run(spec, "--k", "2")
    assert done.returncode == 0
    assert "Cost     not reported by the agent CLI (no price table is applied)" in done.stdout
    data = json.loads(_report(space, str(spec), "--format", "json").stdout)
    assert data["spend"]["run"]["cost_per_attempt_usd"] is None
    assert data["spend"]["run"]["cost_reported"] == 0


def _caliper(space: Workspace, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CALIPER), *args],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_compare_tests_a_cost_change_in_every_format(space: Workspace) -> None:
    one = (
        'tasks:\n  - name: t\n    prompt: "fake: cost {}\\nfake: say hi"\n'
        '    assert: "assert True"\n'
    )
    spec = space.spec(one.format(0.25))
    first = space.run(spec, "--k", "4")
    assert first.returncode == 0, first.stderr
    spec.write_text(one.format(0.5), encoding="utf-8")
    second = space.run(spec, "--k", "4")
    assert second.returncode == 0, second.stderr
    a, b = str(first.results_path), str(second.results_path)
    data = json.loads(_caliper(space, "compare", a, b, "--format", "json").stdout)
    run = next(c for c in data["spend"] if c["metric"] == "cost" and c["task"] is None)
    # 4 × $0.25 against 4 × $0.5: only 2 of the C(8, 4) = 70 splits reach |Δ| = $0.25
    assert run["p_value"] == pytest.approx(2 / 70)
    assert run["verdict"] == "increased" and run["delta"] == pytest.approx(0.25)
    text = _caliper(space, "compare", a, b).stdout
    assert "Cost per attempt (run): $0.25 → $0.5" in text and "increased" in text
    markdown = _caliper(space, "compare", a, b, "--format", "markdown").stdout
    assert "### Cost and time" in markdown and "Cost per attempt \\(t\\)" in markdown
    page = space.root / "compare.html"
    assert _caliper(space, "compare", a, b, "--format", "html", "-o", str(page)).returncode == 0
    assert 'id="spend-changes-table"' in page.read_text(encoding="utf-8")


def test_wall_time_per_attempt_counts_every_try_and_the_waits_between() -> None:
    """Agent time is the scored try's; wall time adds the earlier tries and the waits."""
    from caliper.results.models import AttemptRecord, Outcome, TryRecord
    from caliper.results.spend import attempt_wall, spend_of

    retried = AttemptRecord(
        task_name="t", attempt=1, outcome=Outcome.PASS, duration_seconds=2.0,
        tries=[TryRecord(outcome=Outcome.INFRA_ERROR, duration_seconds=1.5, waited_seconds=4.0)],
    )  # fmt: skip
    once = AttemptRecord(task_name="t", attempt=2, outcome=Outcome.PASS, duration_seconds=3.0)
    never = AttemptRecord(task_name="t", attempt=3, outcome=Outcome.TASK_FAIL)
    assert attempt_wall(retried) == 7.5  # 1.5 + 4.0 + 2.0
    assert attempt_wall(once) == 3.0
    assert attempt_wall(never) is None
    spend = spend_of([retried, once, never])
    assert spend.duration is not None and spend.wall is not None
    assert (spend.duration.median, spend.wall.median) == (2.5, 5.25)  # of {2, 3}; of {7.5, 3}
    assert spend.data()["wall_seconds"]["n"] == 2


def test_the_views_show_wall_time_beside_agent_time(space: Workspace) -> None:
    spec = space.spec(TWO_COSTS)
    run = space.run(spec, "--k", "2")
    assert run.returncode == 0
    assert "Wall time per attempt   median" in _report(space, str(spec)).stdout
    markdown = _report(space, str(spec), "--format", "markdown").stdout
    assert "| Wall time per attempt |" in markdown
    page = space.root / "page.html"
    assert (
        _report(space, str(run.results_path), "--format", "html", "-o", str(page)).returncode == 0
    )
    assert "<th>wall time per attempt</th>" in page.read_text(encoding="utf-8")


def test_wall_time_without_retries_is_the_agent_time_to_the_sign_of_zero() -> None:
    """Without earlier tries the wall spread is the agent-time spread; a duration of -0.0
    (which the wall time's sum turns into 0.0) keeps each its own."""
    from caliper.results.models import AttemptRecord, Outcome
    from caliper.results.spend import spend_of

    def made(*seconds: float) -> list[AttemptRecord]:
        return [
            AttemptRecord(task_name="t", attempt=i, outcome=Outcome.PASS, duration_seconds=s)
            for i, s in enumerate(seconds, 1)
        ]

    spend = spend_of(made(2.0, 3.0, 7.0))
    assert spend.wall == spend.duration
    assert spend.wall is not None and (spend.wall.median, spend.wall.maximum) == (3.0, 7.0)
    signed = spend_of(made(-0.0, 1.0))
    assert signed.duration is not None and signed.wall is not None
    assert math.copysign(1.0, signed.duration.minimum) == -1.0
    assert math.copysign(1.0, signed.wall.minimum) == 1.0


@pytest.mark.parametrize("value", [None, 0.0, -0.0, 1e-300, 0.1, 3, float("inf"), float("nan")])
def test_an_attempt_without_earlier_tries_costs_and_lasts_what_the_general_sum_gives(value):
    """Without earlier tries the cost and wall time skip building the lists of the general
    case: the same float (sign of zero, nan and inf included)."""
    from caliper.plugin.attempt import Usage
    from caliper.results.models import AttemptRecord, Outcome, TryRecord
    from caliper.results.spend import attempt_cost, attempt_wall

    record = AttemptRecord(
        task_name="t", attempt=1, outcome=Outcome.PASS, duration_seconds=value,
        usage=Usage(input_tokens=1, cost_usd=value),
    )  # fmt: skip
    bare = AttemptRecord(task_name="t", attempt=1, outcome=Outcome.PASS)
    with_try = AttemptRecord(
        task_name="t",
        attempt=1,
        outcome=Outcome.PASS,
        duration_seconds=value,
        usage=Usage(input_tokens=1, cost_usd=value),
        tries=[TryRecord(outcome=Outcome.TIMEOUT)],
    )  # fmt: skip  (an earlier try with neither: the general case, the same sums)
    for fast, general in ((attempt_cost, attempt_cost), (attempt_wall, attempt_wall)):
        got, expected = fast(record), general(with_try)
        assert repr(got) == repr(expected)
    assert attempt_cost(bare) is None
    assert (attempt_wall(bare) is None) and (attempt_cost(record) is None) is (value is None)


def test_spend_of_gives_what_the_per_attempt_measures_give_on_random_attempts() -> None:
    """The one pass of spend_of against the measures it stands for: counted attempts, their
    attempt_cost, duration and attempt_wall, spread by spread_of."""
    import random

    from caliper.plugin.attempt import Usage
    from caliper.results.models import AttemptRecord, Outcome, TryRecord
    from caliper.results.spend import attempt_cost, attempt_wall, counted, spend_of
    from caliper.results.spread import spread_of

    rng = random.Random(11)

    def maybe_float():
        return rng.choice([None, 0.0, -0.0, rng.uniform(0, 5), rng.uniform(0, 5)])

    for policy in ("failure", "unusable"):
        for _ in range(150):
            records = []
            for number in range(rng.randint(0, 9)):
                tries = [
                    TryRecord(
                        outcome=Outcome.INFRA_ERROR,
                        duration_seconds=maybe_float(),
                        waited_seconds=maybe_float(),
                        usage=None if rng.random() < 0.5 else Usage(cost_usd=maybe_float()),
                    )
                    for _ in range(rng.choice([0, 0, 0, 1, 2]))
                ]
                usage = None if rng.random() < 0.2 else Usage(cost_usd=maybe_float())
                records.append(
                    AttemptRecord(
                        task_name="t", attempt=number, outcome=rng.choice(list(Outcome)),
                        duration_seconds=maybe_float(), usage=usage, tries=tries,
                    )
                )  # fmt: skip
            kept = counted(records, policy)
            costs = [c for c in map(attempt_cost, kept) if c is not None]
            durations = [r.duration_seconds for r in kept if r.duration_seconds is not None]
            walls = [w for w in map(attempt_wall, kept) if w is not None]
            spend = spend_of(records, 0.95, policy)
            assert spend.attempts == len(kept)
            assert spend.successes == sum(r.outcome is Outcome.PASS for r in kept)
            assert spend.cost_reported == len(costs)
            assert repr(spend.cost) == repr(spread_of(costs, 0.95))
            assert repr(spend.duration) == repr(spread_of(durations, 0.95))
            assert repr(spend.wall) == repr(spread_of(walls, 0.95))
            assert repr(spend.cost_total) == repr(math.fsum(costs) if costs else None)
