"""``CALIPER_JUDGE_TIMEOUT``: read, validated, and a bad value reported in words (not a
Python exception name). Uses the ``fake`` backend as the judge, so it runs anywhere."""

from __future__ import annotations

import pytest

from caliper.errors import UsageError
from caliper_fakeagent.harness import Workspace
from caliper_judge_llm.judge import JUDGE_TIMEOUT_SECONDS, judge_timeout


def test_default_and_explicit_values() -> None:
    assert judge_timeout({}) == JUDGE_TIMEOUT_SECONDS
    assert judge_timeout({"CALIPER_JUDGE_TIMEOUT": " "}) == JUDGE_TIMEOUT_SECONDS
    assert judge_timeout({"CALIPER_JUDGE_TIMEOUT": "2.5"}) == 2.5


@pytest.mark.parametrize("raw", ["abc", "0", "-5", "nan", "inf"])
def test_values_that_are_not_a_usable_timeout_are_refused(raw: str) -> None:
    with pytest.raises(UsageError, match="CALIPER_JUDGE_TIMEOUT") as caught:
        judge_timeout({"CALIPER_JUDGE_TIMEOUT": raw})
    assert "greater than 0" in caught.value.message and caught.value.hint


def test_bad_timeout_makes_a_judge_error_that_says_what_to_fix(tmp_path) -> None:
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
    (attempt,) = run.attempts("judged")
    assert attempt["outcome"] == "judge_error", attempt
    assert (
        "CALIPER_JUDGE_TIMEOUT='0' is not a number of seconds greater than 0" in (attempt["reason"])
    )
    assert "Traceback" not in run.stderr and "ValueError" not in attempt["reason"]
