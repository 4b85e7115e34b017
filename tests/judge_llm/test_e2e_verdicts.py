"""``expect:`` end to end: a fake skill run graded by the REAL claude / codex CLI as the judge.

One ``caliper run`` per judge backend holds every case (each task's expectation carries a
``verdict=…`` tag the scripted model server dispatches on); the tests below read its saved
results, what the server received, and how the judge CLI was started.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from judge_e2e_support import (
    PERSONAL,
    Invocation,
    JudgeLab,
    check,
    open_or_skip,
    verdict,
)

from caliper.plugin.judge import LLM_JUDGE_MARKER
from caliper.results.scoring import score_task
from caliper.results.store import load_run
from caliper.testing.harness import CaliperRun, processes_mentioning
from caliper_judge_llm.prompt import PROMPT_VERSION

pytestmark = pytest.mark.e2e  # every test here drives a real agent CLI (the judge)

RAMBLE = "I think it went fine overall, nothing more to add."
SCRIPT = {
    "fallback_text": "No rule matched this request.",
    "rules": [
        {
            "when": {"judge": True, "request_contains": "verdict=pass-a"},
            "text": verdict(True, "PASS-REASON-A: the tool printed tool-out-42."),
        },
        {
            "when": {"judge": True, "request_contains": "verdict=pass-b"},
            "text": verdict(True, "PASS-REASON-B: answer.txt holds 42."),
        },
        {
            "when": {"judge": True, "request_contains": "verdict=fail-a"},
            "text": verdict(False, "FAIL-REASON-A: no summary file was written."),
        },
        {
            "when": {"judge": True, "request_contains": "verdict=fail-b"},
            "text": verdict(False, "FAIL-REASON-B: answer.txt holds 42, not 43."),
        },
        {"when": {"judge": True, "request_contains": "verdict=garbage"}, "text": RAMBLE},
        {
            "when": {"judge": True, "request_contains": "verdict=ratelimit"},
            "error": {"status": 429, "message": "Rate limit reached, slow down", "retry_after": 0},
        },
    ],
}
SPEC = """\
tasks:
  - name: judged pass
    prompt: |
      Print the number.
      fake: bash echo tool-out-$((40+2))
      fake: say Printed the number.
    expect: "The agent printed 42 with a shell command (verdict=pass-a)."
  - name: judged fail
    prompt: "fake: say I did nothing."
    expect: "A summary file was written (verdict=fail-a)."
  - name: judge rambles
    prompt: "fake: say done"
    expect: "It is done (verdict=garbage)."
  - name: judge rate limited
    prompt: "fake: say done"
    expect: "It is done (verdict=ratelimit)."
  - name: assert and expect pass
    prompt: "fake: write answer.txt 42"
    assert: "assert open('answer.txt').read().strip() == '42', 'answer.txt is wrong'"
    expect: "answer.txt holds 42 (verdict=pass-b)."
  - name: assert passes expect fails
    prompt: "fake: write answer.txt 42"
    assert: "assert open('answer.txt').read().strip() == '42', 'answer.txt is wrong'"
    expect: "answer.txt holds 43 (verdict=fail-b)."
  - name: assert fails
    prompt: "fake: write other.txt 42"
    assert: |
      import os
      assert os.path.exists('answer.txt'), 'no answer.txt written'
    expect: "answer.txt holds 42 (verdict=never)."
"""
JUDGED_TASKS = 6
"""Tasks whose judge must run: every task but ``assert fails``."""


@attrs.frozen
class Graded:
    """The finished run of :data:`SPEC` with one judge backend."""

    lab: JudgeLab
    run: CaliperRun

    def attempt(self, task: str) -> dict:
        (found,) = self.run.attempts(task)
        return found


@pytest.fixture(scope="module", params=["claude-code", "codex"])
def graded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Graded]:
    """:data:`SPEC` run once with ``--judge-model <backend>`` (no model: the pinned one)."""
    lab = open_or_skip(tmp_path_factory, request.param, SCRIPT)
    try:
        spec = lab.spec(SPEC)
        run = lab.run(spec, "--judge-model", request.param, "--workers", "2")
        assert run.results is not None, run.describe()
        yield Graded(lab, run)
    finally:
        lab.close()


def test_run_finishes_cleanly(graded: Graded) -> None:
    run = graded.run
    assert run.returncode == 0, run.describe()
    assert "Traceback" not in run.stderr + run.stdout, run.describe()
    assert run.home_changes == (), run.home_changes
    assert list(run.sandbox_parent.iterdir()) == [], "sandboxes (judge homes too) were left"
    assert processes_mentioning(str(run.sandbox_parent)) == []


def test_pass_verdict_passes(graded: Graded) -> None:
    attempt = graded.attempt("judged pass")
    assert attempt["outcome"] == "pass", attempt
    expect = check(attempt, "expect")
    assert expect["passed"] is True
    assert expect["reason"] == "PASS-REASON-A: the tool printed tool-out-42."


def test_fail_verdict_is_a_task_failure_with_the_reasoning(graded: Graded) -> None:
    attempt = graded.attempt("judged fail")
    assert attempt["outcome"] == "task_fail", attempt
    assert "FAIL-REASON-A: no summary file was written." in attempt["reason"]
    assert check(attempt, "expect")["passed"] is False


def test_unparseable_answer_is_a_judge_error_showing_it(graded: Graded) -> None:
    attempt = graded.attempt("judge rambles")
    assert attempt["outcome"] == "judge_error", attempt
    error = check(attempt, "expect")["error"]
    assert RAMBLE in error, error
    engine = graded.lab.engine
    assert "--judge-model" in error, error
    assert f"this one was {engine.backend_id}:{engine.pinned_model}" in error, error


def test_rate_limited_judge_is_unusable_not_a_failure(graded: Graded) -> None:
    attempt = graded.attempt("judge rate limited")
    assert attempt["outcome"] == "judge_error", attempt
    expect = check(attempt, "expect")
    assert expect["passed"] is None
    assert "429" in expect["error"] or "rate limit" in expect["error"].lower(), expect
    assert "--judge-model" in expect["error"], expect
    assert graded.lab.judge_requests("verdict=ratelimit"), "the judge never reached the server"
    results = load_run(graded.run.results_path)
    task = next(t for t in results.tasks if t.name == "judge rate limited")
    score = score_task(task)
    assert (score.usable, score.unusable, score.score) == (0, 1, None), score


def test_assert_and_expect_must_both_pass(graded: Graded) -> None:
    both = graded.attempt("assert and expect pass")
    assert both["outcome"] == "pass", both
    assert [c["passed"] for c in both["checks"]] == [True, True], both["checks"]

    judge_says_no = graded.attempt("assert passes expect fails")
    assert judge_says_no["outcome"] == "task_fail", judge_says_no
    assert check(judge_says_no, "assert")["passed"] is True
    assert "FAIL-REASON-B" in judge_says_no["reason"]

    assert_says_no = graded.attempt("assert fails")
    assert assert_says_no["outcome"] == "task_fail", assert_says_no
    assert "no answer.txt written" in assert_says_no["reason"]
    assert check(assert_says_no, "expect")["details"].get("not_run") is True
    assert graded.lab.judge_requests("verdict=never") == [], "judged a failed attempt"


def test_meta_records_judge_backend_concrete_model_and_prompt_version(graded: Graded) -> None:
    engine = graded.lab.engine
    meta = graded.run.results["meta"]
    assert meta["judge_backend"] == engine.backend_id
    assert meta["judge_model"] == engine.pinned_model
    assert meta["judge_prompt_version"] == PROMPT_VERSION
    sent_models = {r.body.get("model") for r in graded.lab.judge_requests()}
    assert sent_models == {engine.pinned_model}, sent_models
    details = check(graded.attempt("judged pass"), "expect")["details"]
    assert details["judge_backend"] == engine.backend_id
    assert details["judge_model"] == engine.pinned_model


def test_judge_request_carries_marker_and_transcript_tools(graded: Graded) -> None:
    (request,) = graded.lab.judge_requests("verdict=pass-a")
    assert request.api == graded.lab.engine.wire_api
    text = request.sent_text()
    assert LLM_JUDGE_MARKER in text
    assert f"prompt-version={PROMPT_VERSION}" in text
    assert "TOOL CALL Bash" in text
    assert '"command": "echo tool-out-$((40+2))"' in text  # the tool call's input
    assert "result: tool-out-42" in text  # its real output
    assert "Printed the number." in text  # the final answer


def test_judge_sees_nothing_of_the_users_personal_config(graded: Graded) -> None:
    requests = graded.lab.judge_requests()
    assert len(requests) >= JUDGED_TASKS, [r.answered_by for r in requests]
    for request in graded.lab.server.requests:
        assert PERSONAL not in request.sent_text(), request.answered_by
    assert graded.lab.tripped() == [], "a hook, MCP server or notify program of the user ran"


def _judge_starts(graded: Graded) -> list[Invocation]:
    starts = graded.lab.invocations()
    assert len(starts) == JUDGED_TASKS, starts
    return starts


def test_judge_runs_in_a_fresh_home_inside_the_run_sandbox(graded: Graded) -> None:
    real_home = str(graded.lab.home.path)
    sandboxes = str(graded.run.sandbox_parent)
    homes = set()
    for start in _judge_starts(graded):
        assert start.home.startswith(sandboxes + "/"), start
        assert "judge-" in start.home and start.home != real_home, start
        if graded.lab.engine.backend_id == "codex":
            assert start.codex_home.startswith(start.home + "/"), start
        homes.add(start.home)
    assert len(homes) == JUDGED_TASKS, "judge calls shared a home"
    assert not any(Path(h).exists() for h in homes), "a judge home was left behind"


def test_judge_prompt_goes_through_stdin_not_argv(graded: Graded) -> None:
    for start in _judge_starts(graded):
        joined = "\0".join(start.argv)
        assert LLM_JUDGE_MARKER not in joined and "verdict=" not in joined, start.argv
        assert len(joined) < 2_000, f"{len(joined)} bytes of arguments"
        assert start.stdin in ("pipe", "file"), start


def test_judge_tokens_are_recorded_and_kept_apart_from_the_skill_totals(graded: Graded) -> None:
    """The judge CLI's own usage is saved per check and summed apart from the skill's tokens."""
    from caliper.results.codec import loads
    from caliper.results.scoring import judge_tokens, usage_totals

    details = check(graded.attempt("judged pass"), "expect")["details"]
    usage = details["judge_usage"]
    # The scripted judge answers report 100 input and 20 output tokens per request.
    assert usage["input_tokens"] + (usage["cache_read_tokens"] or 0) >= 100, usage
    assert usage["output_tokens"] == 20, usage
    run = loads(graded.run.results_path.read_text())
    attempts = [a for task in run.tasks for a in task.attempts]
    totals = usage_totals(attempts)
    assert totals.judge_tokens == sum(judge_tokens(a) or 0 for a in attempts) > 0
