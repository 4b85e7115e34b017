"""Bars on `caliper run` (--min-score / --min-activation / --inconclusive), through the real
`caliper` script and the fake agent, at seeded pass rates.

With k=10 and 95 % Wilson intervals, worked by hand from Wilson's (1927) formula with
z = 1.95996: 10/10 → [n/(n+z²), 1] = [72.2 %, 100 %]; 0/10 → [0, z²/(n+z²)] = [0 %, 27.8 %];
7/10 → centre 0.6445 ± 0.2477 = [39.7 %, 89.2 %]. Against a bar of 70 % the first is met,
the third inconclusive, the second failed.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from gate_support import seeded_spec

from caliper_fakeagent.harness import CALIPER, Workspace

PATTERNS = {"always passes": "P" * 10, "mostly = passes": "PPPPPPPFFF", "never passes": "F" * 10}


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory):
    """One k=10 run with a bar on every task, under the default (fail) policy."""
    space = Workspace.create(tmp_path_factory.mktemp("gate"))
    spec = seeded_spec(space, PATTERNS)
    done = space.run(
        spec,
        "--k",
        "10",
        "--min-score",
        "always passes=0.65",
        "--min-score",
        "mostly = passes=65%",
        "--min-score",
        "never passes=0.65",
        timeout=180,
    )
    return space, spec, done


def test_each_bar_is_reported_in_its_case(gated) -> None:
    _space, _spec, done = gated
    out = done.stdout
    assert "✓ met  success of task 'always passes' ≥ 65%\n      10/10 = 100% [69.2%–100%]" in out
    assert (
        "~ inconclusive  success of task 'mostly = passes' ≥ 65%\n"
        "      7/10 = 70% [34.8%–93.3%]  → counts as fail"
    ) in out
    assert "✗ failed  success of task 'never passes' ≥ 65%\n      0/10 = 0% [0%–30.8%]" in out
    assert "Gate: FAILED (2 of 3 bars not met)" in out


def test_a_failed_gate_exits_3_and_says_it_was_a_bar(gated) -> None:
    _space, _spec, done = gated
    assert done.returncode == 3, done.stderr
    assert "Gate failed: 2 of 3 bars not met" in done.stderr
    assert "success of task 'never passes' ≥ 65%: failed" in done.stderr
    assert "setup" not in done.stderr.lower()
    assert "Traceback" not in done.stderr


def test_report_gives_the_verdicts_in_json(gated) -> None:
    space, spec, _done = gated
    done = subprocess.run(
        [
            str(CALIPER),
            "report",
            str(spec),
            "--format",
            "json",
            "--min-score",
            "always passes=0.65",
            "--min-score",
            "mostly = passes=0.65",
            "--inconclusive",
            "pass",
        ],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    gate = json.loads(done.stdout)["gate"]
    assert gate["passed"] is True and gate["inconclusive"] == "pass"
    met, unsure = gate["bars"]
    assert (met["verdict"], met["successes"], met["trials"]) == ("met", 10, 10)
    assert met["interval"]["low"] == pytest.approx(0.6915, abs=1e-4)  # Clopper–Pearson 10/10
    assert unsure["verdict"] == "inconclusive" and unsure["passed"] is True
    assert unsure["interval"]["low"] == pytest.approx(0.3475, abs=1e-4)  # Clopper–Pearson 7/10
    assert unsure["interval"]["high"] == pytest.approx(0.9333, abs=1e-4)


@pytest.mark.parametrize(("policy", "code"), [("pass", 0), ("fail", 3)])
def test_inconclusive_policy_decides_the_exit(tmp_path, policy: str, code: int) -> None:
    space = Workspace.create(tmp_path)
    spec = seeded_spec(space, {"always": "P" * 10, "mostly": "PPPPPPPFFF"})
    done = space.run(
        spec,
        "--k",
        "10",
        "--min-score",
        "always=0.65",
        "--min-score",
        "mostly=0.65",
        "--inconclusive",
        policy,
        timeout=180,
    )
    assert done.returncode == code, done.stdout + done.stderr
    assert f"counts as {policy}" in done.stdout
    assert ("Gate: PASSED" in done.stdout) is (code == 0)


def test_a_met_gate_exits_0(tmp_path) -> None:
    space = Workspace.create(tmp_path)
    spec = seeded_spec(space, {"always": "P" * 10})
    done = space.run(spec, "--k", "10", "--min-score", "always=0.65", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Gate: PASSED (1 of 1 bars)" in done.stdout


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        ("--min-score=alway=0.65", "no task named 'alway'. Did you mean 'always'?"),
        ("--min-activation=always=0.7", "task 'always' has no activates: check"),
        ("--min-score=always=1.7", "must lie between 0 and 1"),
        ("--min-score=lots", "is not a number"),
    ],
)
def test_bad_bars_are_usage_errors_before_any_attempt(tmp_path, flag: str, message: str) -> None:
    space = Workspace.create(tmp_path)
    spec = seeded_spec(space, {"always": "P"})
    done = space.run(spec, "--k", "1", flag)
    assert done.returncode == 2, done.stdout + done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr
    assert done.results_path is None  # nothing ran
    assert not (space.root / "counters").exists()


def test_a_bar_on_the_run_follows_confidence(tmp_path) -> None:
    """One task, so the run's interval is that task's Wilson interval. For 10/10 the lower
    bound is n / (n + z²): 0.7225 at 95 % (z = 1.960), 0.6012 at 99 % (z = 2.576)."""
    space = Workspace.create(tmp_path)
    spec = seeded_spec(space, {"always": "P" * 10})
    done = space.run(spec, "--k", "10", "--min-score", "0.7", timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "✓ met  run success ≥ 70%\n      100% [72.2%–100%]" in done.stdout
    strict = subprocess.run(
        [str(CALIPER), "report", str(spec), "--min-score", "0.7", "--confidence", "0.99"],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert strict.returncode == 3, strict.stdout + strict.stderr
    assert "(99% intervals; inconclusive counts as fail)" in strict.stdout
    assert "~ inconclusive  run success ≥ 70%\n      100% [60.1%–100%]" in strict.stdout
    assert "Gate failed: 1 of 1 bar not met (run success ≥ 70%: inconclusive)" in strict.stderr


def test_activation_bars(tmp_path) -> None:
    """A skill loaded in 10 of 10 attempts: [72.2 %, 100 %] clears 70 %, on the task and on
    the run (one task, so the run's interval is the task's)."""
    space = Workspace.create(tmp_path)
    space.skill("greeter")
    spec = space.spec(
        """\
        skills:
          - ./skills/greeter
        tasks:
          - name: greets
            prompt: "fake: load greeter"
            activates: [greeter]
            assert: "assert True"
        """
    )
    done = space.run(
        spec, "--k", "10", "--min-activation", "0.7", "--min-activation", "greets=0.65"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "✓ met  run activation ≥ 70%\n      100% [72.2%–100%]" in done.stdout
    assert (
        "✓ met  activation of task 'greets' ≥ 65%\n      10/10 = 100% [69.2%–100%]" in done.stdout
    )


def test_report_refuses_a_bar_on_an_unknown_task(gated) -> None:
    space, spec, _done = gated
    done = subprocess.run(
        [str(CALIPER), "report", str(spec), "--min-score", "never pases=0.5"],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "no task named 'never pases'. Did you mean 'never passes'?" in done.stderr
    assert done.stdout == ""  # refused before showing anything
