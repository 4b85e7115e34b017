"""Rate limits from the scripted model server against the real ``claude`` (issue 15): the
automatic ``--retries`` and ``caliper retry`` re-run a 429'd attempt, keep the 429 try in its
history, and a rate limit is never scored as a task failure."""

from __future__ import annotations

import subprocess

import pytest
from claude_run_support import ClaudeRunLab, lab  # noqa: F401 (fixture)

from caliper.testing.harness import caliper_executable

pytestmark = pytest.mark.e2e

RATE_LIMITED = {"status": 429, "message": "rate limited (scripted)", "retry_after": 0}


def _spec(lab: ClaudeRunLab):  # noqa: F811
    return lab.spec({"tasks": [{"name": "greet", "prompt": "Say hello.", "assert": "assert True"}]})


def test_automatic_retry_after_a_429(lab: ClaudeRunLab) -> None:  # noqa: F811
    server = lab.server({"turns": [{"error": RATE_LIMITED, "times": 1}, {"text": "Hello."}]})
    _out, err = lab.finish(lab.start(_spec(lab), server, "--retries", "2"))
    (run,) = lab.results()
    (attempt,) = run["tasks"][0]["attempts"]
    assert attempt["outcome"] == "pass", (attempt, err)
    (earlier,) = attempt["tries"]
    assert earlier["outcome"] == "infra_error" and "429" in earlier["reason"]


def test_caliper_retry_reruns_the_429_attempt(lab: ClaudeRunLab) -> None:  # noqa: F811
    server = lab.server({"turns": [{"error": RATE_LIMITED, "times": 1}, {"text": "Hello."}]})
    _out, err = lab.finish(lab.start(_spec(lab), server, "--retries", "0"))
    (parent,) = lab.results()
    (attempt,) = parent["tasks"][0]["attempts"]
    assert attempt["outcome"] == "infra_error", (attempt, err)  # never task_fail
    assert attempt["tries"] == []

    done = subprocess.run(
        [str(caliper_executable()), "retry", parent["meta"]["run_id"], "--retries", "0"],
        cwd=lab.project,
        env=lab.env(server),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    _parent, child = lab.results()
    assert child["meta"]["parent_run"] == f"faults/{parent['meta']['run_id']}"
    (retried,) = child["tasks"][0]["attempts"]
    assert retried["outcome"] == "pass"
    (earlier,) = retried["tries"]
    assert earlier["outcome"] == "infra_error" and "429" in earlier["reason"]
    assert earlier["run_id"] == parent["meta"]["run_id"]


def test_claude_reported_wait_is_honoured(lab: ClaudeRunLab) -> None:  # noqa: F811
    """Claude Code retries once itself (CLAUDE_CODE_MAX_RETRIES=1), reporting its wait in an
    api_retry event; caliper's own retry then waits that long instead of its backoff."""
    limited = {**RATE_LIMITED, "retry_after": 1}
    server = lab.server({"turns": [{"error": limited, "times": 2}, {"text": "Hello."}]})
    process = lab.start(_spec(lab), server, "--retries", "1", env={"CLAUDE_CODE_MAX_RETRIES": "1"})
    _out, err = lab.finish(process)
    (run,) = lab.results()
    (attempt,) = run["tasks"][0]["attempts"]
    assert attempt["outcome"] == "pass", (attempt, err)
    (earlier,) = attempt["tries"]
    assert earlier["outcome"] == "infra_error"
    assert earlier["retry_after"] is not None and earlier["retry_after"] >= 1
    assert earlier["waited_seconds"] == pytest.approx(earlier["retry_after"], abs=0.001)
