"""A seeded simulation of what issue 12's held-out check measures, through the real compare.

Hundreds of synthetic run pairs are written in the saved-results format (5 tasks, pass
probabilities 0.6-0.9) and fed to `caliper compare` (in-process through ``caliper.cli.main``
for speed, and a handful through the installed console script). Pairs of the *same* skill
must be called a regression at most ~5% of the time at k=3 and at k=10; a 40-point drop on
every task must be caught at least 80% of the time at k=10. The observed power is also
checked against what ``caliper.results.power`` predicts for that design.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path

import pytest
from test_results_support import F, P, caliper, run, task

from caliper.cli import main
from caliper.results import codec
from caliper.results.power import overall_power

PASS_CHANCES = (0.6, 0.7, 0.75, 0.8, 0.9)
PAIRS = 300
SEED = 12


def write_run(path: Path, chances, k: int, rng: random.Random, run_id: str) -> None:
    tasks = [
        task(f"task {i}", [P if rng.random() < p else F for _ in range(k)])
        for i, p in enumerate(chances)
    ]
    path.write_text(codec.dumps(run(tasks, run_id=run_id, k=k)))


def write_pair(folder: Path, before, after, k: int, rng: random.Random, n: int):
    a, b = folder / f"pair{n}-a.json", folder / f"pair{n}-b.json"
    write_run(a, before, k, rng, f"2026-12-01T00-00-{n % 60:02d}Z-a{n}")
    write_run(b, after, k, rng, f"2026-12-01T00-00-{n % 60:02d}Z-b{n}")
    return a, b


def compare_in_process(a: Path, b: Path) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(["compare", str(a), str(b), "--format", "json"])


def regression_rate(folder: Path, before, after, k: int, seed: int) -> tuple[float, list]:
    rng = random.Random(seed)
    codes, pairs = [], []
    for n in range(PAIRS):
        a, b = write_pair(folder, before, after, k, rng, n)
        code = compare_in_process(a, b)
        assert code in (0, 1), f"compare exited {code} on {a} {b}"
        codes.append(code)
        pairs.append((a, b, code))
    return sum(c == 1 for c in codes) / len(codes), pairs


@pytest.mark.slow
@pytest.mark.parametrize("k", [3, 10])
def test_identical_skills_are_rarely_called_a_regression(tmp_path, k):
    rate, pairs = regression_rate(tmp_path, PASS_CHANCES, PASS_CHANCES, k, SEED + k)
    print(f"\nidentical pairs, k={k}: called a regression in {rate:.1%} of {PAIRS}")
    assert rate <= 0.05
    # the console script agrees with the in-process calls on a handful of pairs
    for a, b, code in pairs[:3]:
        out = caliper("compare", str(a), str(b), cwd=tmp_path)
        assert out.returncode == code, out.stdout + out.stderr


@pytest.mark.slow
def test_a_40_point_drop_on_every_task_is_caught_at_k_10(tmp_path):
    dropped = tuple(p - 0.4 for p in PASS_CHANCES)
    rate, pairs = regression_rate(tmp_path, PASS_CHANCES, dropped, 10, SEED)
    mean_before = sum(PASS_CHANCES) / len(PASS_CHANCES)
    # the whole-run test comes first, at the full level
    predicted = overall_power(5, 10, 10, mean_before, mean_before - 0.4, 0.05)
    print(f"\n40-pt drop, k=10: caught in {rate:.1%} of {PAIRS} (predicted {predicted:.1%})")
    assert rate >= 0.80
    assert abs(rate - predicted) < 0.08  # the power function describes what compare does
    caught = [(a, b) for a, b, code in pairs if code == 1][:2]
    for a, b in caught:
        out = caliper("compare", str(a), str(b), cwd=tmp_path)
        assert out.returncode == 1, out.stdout + out.stderr
        assert "Regression" in out.stdout
    data = json.loads(
        caliper(
            "compare", str(caught[0][0]), str(caught[0][1]), "--format", "json", cwd=tmp_path
        ).stdout
    )
    assert data["has_regression"] is True and data["delta"] < 0


def verdicts(folder: Path, before, after, k: int, pairs: int, seed: int) -> list[dict]:
    """``compare --format json`` of ``pairs`` seeded pairs, read back."""
    rng = random.Random(seed)
    out = []
    for n in range(pairs):
        a, b = write_pair(folder, before, after, k, rng, n)
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(io.StringIO()):
            code = main(["compare", str(a), str(b), "--format", "json"])
        assert code in (0, 1)
        out.append(json.loads(buffer.getvalue()))
    return out


FULL_POWER_PAIRS = 160


@pytest.mark.slow
def test_a_20_point_drop_on_5_tasks_at_k_20_is_caught_at_full_power(tmp_path):
    """The whole-run test is judged at the full level (not alpha / 6 as one Holm family with
    the tasks): 0.8 -> 0.6 on each of 5 tasks at k=20 is caught >= 80% of the time."""
    data = verdicts(tmp_path, (0.8,) * 5, (0.6,) * 5, 20, 240, SEED + 20)
    rate = sum(d["has_regression"] for d in data) / len(data)
    predicted = overall_power(5, 20, 20, 0.8, 0.6, 0.05)
    print(f"\n0.8->0.6 x5, k=20: caught {rate:.1%} of {len(data)} (predicted {predicted:.1%})")
    assert rate >= 0.80
    assert abs(rate - predicted) < 0.08


@pytest.mark.slow
@pytest.mark.parametrize("k", [3, 20])
def test_full_power_keeps_false_alarms_at_most_alpha(tmp_path, k):
    """Identical truths: any call (regressed or improved, run or task) in <= 5% of pairs;
    partial nulls (two tasks drop 0.8 -> 0.6, three stay): each unchanged task is called
    changed in <= 5% of pairs, and any unchanged task in <= 5%."""
    same = verdicts(tmp_path, (0.8,) * 5, (0.8,) * 5, k, FULL_POWER_PAIRS, SEED + 40 + k)
    calls = [
        d["overall_verdict"] in ("regressed", "improved")
        or any(t["verdict"] in ("regressed", "improved") for t in d["tasks"])
        for d in same
    ]
    assert sum(calls) / len(calls) <= 0.05
    after = (0.6, 0.6, 0.8, 0.8, 0.8)
    partial = verdicts(tmp_path, (0.8,) * 5, after, k, FULL_POWER_PAIRS, SEED + 60 + k)
    false_calls = [
        [t["verdict"] in ("regressed", "improved") for t in d["tasks"][2:]] for d in partial
    ]
    per_task = [sum(row[i] for row in false_calls) / len(partial) for i in range(3)]
    family = sum(any(row) for row in false_calls) / len(partial)
    print(f"\nk={k}: identical {sum(calls) / len(calls):.1%}, partial per task {per_task}")
    assert max(per_task) <= 0.05 and family <= 0.05
