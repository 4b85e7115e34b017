"""``caliper run --max-cost USD``: once the attempts' reported cost reaches the budget no
further attempt starts; the finished ones are saved as a partial run naming the budget, and the
run exits 4. A CLI that reports no cost is said to be unlimited by it."""

from __future__ import annotations

from pathlib import Path

import pytest

from caliper_fakeagent.harness import Workspace

COSTLY = """\
    tasks:
      - name: costly
        prompt: |
          fake: cost 0.25
          fake: say done
        assert: "assert True"
    """


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path)


def test_the_run_stops_starting_attempts_at_the_budget(space: Workspace) -> None:
    spec = space.spec(COSTLY)
    done = space.run(spec, "--k", "10", "--workers", "1", "--max-cost", "0.6")
    assert done.returncode == 4, done.stderr
    data = done.results
    attempts = data["tasks"][0]["attempts"]
    # 0.25 per attempt: the third brings the total to 0.75 >= 0.6, so no fourth starts
    assert len(attempts) == 3
    assert sum(a["usage"]["cost_usd"] for a in attempts) == pytest.approx(0.75)
    assert data["meta"]["partial"] is True
    assert "--max-cost budget of $0.60 was reached ($0.75" in data["meta"]["stop_reason"]
    assert "--max-cost budget of $0.60 was reached" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_budget_above_the_spend_changes_nothing(space: Workspace) -> None:
    spec = space.spec(COSTLY)
    done = space.run(spec, "--k", "3", "--max-cost", "5")
    assert done.returncode == 0, done.stderr
    data = done.results
    assert len(data["tasks"][0]["attempts"]) == 3 and not data["meta"]["partial"]


def test_no_reported_cost_is_said_and_does_not_stop_the_run(space: Workspace) -> None:
    spec = space.spec(
        'tasks:\n  - name: t\n    prompt: "fake: say hi"\n    assert: "assert True"\n'
    )
    done = space.run(spec, "--k", "2", "--max-cost", "0.01")
    assert done.returncode == 0, done.stderr
    assert "no attempt reported a cost, so --max-cost could not limit this run" in done.stderr
