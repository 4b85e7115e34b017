"""Adaptive k through the real ``caliper`` script on the fake agent with seeded pass rates
(issue 15): each task stops once its bar is decided by the anytime-valid interval, and says
why; a bar near the true rate runs to ``--max-k``."""

from __future__ import annotations

from pathlib import Path

import pytest

from caliper_fakeagent.harness import Workspace


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path)


def _task(name: str, chance: float, counter: Path) -> str:
    return f"""\
  - name: {name}
    prompt: "fake: coin {chance} {counter}"
    assert: "import os; assert os.path.exists('coin.txt')"
"""


def test_adaptive_k_stops_each_task_when_decided(space: Workspace) -> None:
    text = "tasks:\n" + "".join(
        _task(name, chance, space.root / f"count-{name}")
        for name, chance in (("always", 1.0), ("never", 0.0), ("coin", 0.5))
    )
    spec = space.root / "demo.eval.yaml"
    spec.write_text(text, encoding="utf-8")
    run = space.run(
        spec,
        "--k",
        "auto",
        "--max-k",
        "12",
        "--min-score",
        "0.5",
        "--inconclusive",
        "pass",  # --min-score is also the run's gate bar: the mixed run straddles 0.5
        "--workers",
        "2",
        timeout=180,
    )
    assert run.returncode == 0, run.stderr
    meta = run.results["meta"]
    assert meta["k"] == 12 and meta["adaptive"]["run_bar"] == 0.5
    always, never, coin = (run.task(n) for n in ("always", "never", "coin"))
    # --max-k 12 against 50 %: 5 straight passes have chance 1/32 = 3.1 % at a rate of 50 %
    # and 4 fewer than that are not enough once the wrong-"met" chance over every path is
    # summed (tests/core/test_sequential_design.py); 5 straight failures have chance
    # 0.4^5 = 1.0 % at 60 % (bar + margin)
    assert len(always["attempts"]) == 5
    assert always["stop_reason"].startswith("bar 50.0% met")
    assert len(never["attempts"]) == 5
    assert never["stop_reason"].startswith("bar 50.0% failed")
    # a fair coin against a 50 % bar must not be called met (it may run to --max-k, or be
    # called failed: 50 % lies in the indifference zone below 60 %)
    assert not coin["stop_reason"].startswith("bar 50.0% met")
    assert "Adaptive k" in run.stdout and "always: k = 5" in run.stdout


def test_adaptive_k_needs_a_bar_or_precision(space: Workspace) -> None:
    spec = space.spec("tasks:\n  - name: t\n    prompt: hi\n    assert: 'assert True'\n")
    run = space.run(spec, "--k", "auto")
    assert run.returncode == 2 and "--min-score" in run.stderr
    fixed = space.run(spec, "--k", "3", "--max-k", "5")
    assert fixed.returncode == 2 and "only applies with --k auto" in fixed.stderr


def test_a_task_bar_must_name_a_task(space: Workspace) -> None:
    spec = space.spec("tasks:\n  - name: greet\n    prompt: hi\n    assert: 'assert True'\n")
    run = space.run(spec, "--k", "auto", "--min-score", "gret=0.8")
    assert run.returncode == 2 and "Did you mean 'greet'?" in run.stderr
    assert not list(space.root.glob(".caliper/results/*/*")), "nothing is left behind"
