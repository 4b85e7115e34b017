"""The judge's time budget: ``--judge-timeout``, else ``CALIPER_JUDGE_TIMEOUT``, else the
attempt's ``--timeout`` (issue 11, item 14). A bad value is refused before any attempt, in
words. Uses the ``fake`` backend as agent and judge, so it runs anywhere."""

from __future__ import annotations

import time

import pytest

from caliper.errors import UsageError
from caliper.runner.run.options import RunOptions, judge_timeout_from_env
from caliper_fakeagent.harness import Workspace


def test_env_values() -> None:
    assert judge_timeout_from_env({}) is None
    assert judge_timeout_from_env({"CALIPER_JUDGE_TIMEOUT": " "}) is None
    assert judge_timeout_from_env({"CALIPER_JUDGE_TIMEOUT": "2.5"}) == 2.5


def test_default_is_the_attempt_timeout() -> None:
    from pathlib import Path

    assert RunOptions(Path("x"), timeout=5).judge_seconds == 5
    assert RunOptions(Path("x"), timeout=5, judge_timeout=2).judge_seconds == 2


@pytest.mark.parametrize("raw", ["abc", "0", "-5", "nan", "inf"])
def test_values_that_are_not_a_usable_timeout_are_refused(raw: str) -> None:
    with pytest.raises(UsageError, match="CALIPER_JUDGE_TIMEOUT") as caught:
        judge_timeout_from_env({"CALIPER_JUDGE_TIMEOUT": raw})
    assert "greater than 0" in caught.value.message and caught.value.hint


def test_bad_env_timeout_is_refused_before_any_attempt(tmp_path) -> None:
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: judged
            prompt: "fake: say hi"
            expect: "Says hi"
        """)
    run = space.run(
        spec, "--k", "1", "--judge-model", "fake", env=space.env(CALIPER_JUDGE_TIMEOUT="0")
    )
    assert run.returncode == 2, run.stderr
    assert "CALIPER_JUDGE_TIMEOUT='0' is not a number of seconds greater than 0" in run.stderr
    assert "Traceback" not in run.stderr
    assert run.results_path is None


@pytest.mark.parametrize("flag", ["0", "-1", "inf", "soon"])
def test_bad_flag_is_a_usage_error(tmp_path, flag: str) -> None:
    space = Workspace.create(tmp_path)
    spec = space.spec('tasks:\n  - name: t\n    prompt: "fake: say hi"\n    assert: "pass"\n')
    run = space.run(spec, "--judge-timeout", flag)
    assert run.returncode == 2 and "--judge-timeout" in run.stderr, run.stderr


def _hanging_judges(space: Workspace):
    return space.spec("""\
        tasks:
          - name: slow assert
            prompt: "fake: say hi"
            assert: |
              import time
              time.sleep(60)
          - name: slow expect
            prompt: "fake: say hi"
            expect: "Says hi (fake-judge: sleep)"
        """)


@pytest.mark.parametrize(
    ("args", "seconds"), [(("--timeout", "3"), 3), (("--timeout", "30", "--judge-timeout", "2"), 2)]
)
def test_hanging_judges_give_up_after_the_judge_timeout(tmp_path, args, seconds) -> None:
    space = Workspace.create(tmp_path)
    spec = _hanging_judges(space)
    started = time.monotonic()
    run = space.run(spec, "--k", "1", "--workers", "2", "--judge-model", "fake", *args)
    took = time.monotonic() - started
    assert run.returncode == 1, run.stderr  # every attempt unusable
    (asserted,) = run.attempts("slow assert")
    assert asserted["outcome"] == "judge_error"
    assert f"assert timed out after {seconds}s" in asserted["reason"], asserted
    (expected,) = run.attempts("slow expect")
    assert expected["outcome"] == "judge_error"
    assert f"timed out after {seconds}s" in expected["reason"], expected
    assert took < seconds + 15, f"took {took:.1f}s"


def test_help_documents_the_flag(tmp_path) -> None:
    import subprocess

    from caliper_fakeagent.harness import CALIPER

    shown = subprocess.run(
        [str(CALIPER), "run", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "--judge-timeout SECONDS" in shown and "CALIPER_JUDGE_TIMEOUT" in shown
