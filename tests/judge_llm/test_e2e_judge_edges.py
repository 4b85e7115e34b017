"""``expect:`` end to end, the edges: a judge that hangs past its timeout, an explicit
``--judge-model <backend>:<model>``, and trigger probes (``activates:`` only) that must never
call a judge. The judge is the REAL claude / codex CLI against the scripted model server."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from judge_e2e_support import PERSONAL, JudgeLab, check, verdict

from caliper.testing.harness import processes_mentioning

pytestmark = pytest.mark.e2e  # every test here drives a real agent CLI (the judge)

BACKENDS = ["claude-code", "codex"]
JUDGE_TIMEOUT = 6
"""Seconds (``CALIPER_JUDGE_TIMEOUT``); the scripted judge answers only after ``SLOW``."""
SLOW = 30
EXPLICIT_MODEL = {"claude-code": "claude-haiku-9-test", "codex": "gpt-judge-test"}


def _wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.parametrize("backend", BACKENDS)
def test_judge_timeout_is_a_judge_error(backend: str, lab_for: Callable[..., JudgeLab]) -> None:
    lab = lab_for(
        backend,
        {"rules": [{"when": {"judge": True}, "delay": SLOW, "text": verdict(True, "late")}]},
    )
    spec = lab.spec(
        'tasks:\n  - name: slow judge\n    prompt: "fake: say hi"\n'
        '    expect: "Says hi (verdict=slow)."\n'
    )
    started = time.monotonic()
    run = lab.run(spec, "--judge-model", backend, env={"CALIPER_JUDGE_TIMEOUT": str(JUDGE_TIMEOUT)})
    took = time.monotonic() - started
    assert run.results is not None, run.describe()
    assert run.returncode == 1, run.describe()  # every attempt unusable
    attempt = run.attempt
    assert attempt["outcome"] == "judge_error", attempt
    error = check(attempt, "expect")["error"]
    assert f"timed out after {JUDGE_TIMEOUT}s" in error, error
    assert "--judge-model" in error, error
    assert took < SLOW - 5, f"the run waited for the slow judge ({took:.1f}s)"
    assert processes_mentioning(str(run.sandbox_parent)) == [], "the judge CLI survived"
    assert list(run.sandbox_parent.iterdir()) == []
    # the request did reach the server: stopping it ends the delay and records the request
    lab.server.stop()
    assert _wait_for(lambda: bool(lab.judge_requests("verdict=slow")), 5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_explicit_judge_model_is_used_and_recorded(
    backend: str, lab_for: Callable[..., JudgeLab]
) -> None:
    model = EXPLICIT_MODEL[backend]
    lab = lab_for(backend, {"rules": [{"when": {"judge": True}, "text": verdict(True, "ok")}]})
    spec = lab.spec(
        'tasks:\n  - name: judged\n    prompt: "fake: say hi"\n    expect: "Says hi."\n'
    )
    run = lab.run(spec, "--judge-model", f"{backend}:{model}")
    assert run.returncode == 0, run.describe()
    assert run.attempt["outcome"] == "pass", run.attempt
    (request,) = lab.judge_requests()
    assert request.body.get("model") == model
    meta = run.results["meta"]
    assert (meta["judge_backend"], meta["judge_model"]) == (backend, model)


@pytest.mark.parametrize("backend", BACKENDS)
def test_activation_only_tasks_never_call_the_judge(
    backend: str, lab_for: Callable[..., JudgeLab]
) -> None:
    lab = lab_for(backend, {"rules": [{"when": {"judge": True}, "text": verdict(True, "no")}]})
    skill = lab.project / "skills" / "greeter"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: greeter\ndescription: Greets people.\n---\nSay hello.\n", encoding="utf-8"
    )
    spec = lab.spec(
        "skills:\n  - ./skills/greeter\ntasks:\n"
        '  - name: loads it\n    prompt: "fake: load greeter"\n    activates: [greeter]\n'
        '  - name: ignores it\n    prompt: "fake: say hi"\n    activates: []\n'
    )
    run = lab.run(spec, "--judge-model", backend, k=2)
    assert run.results is not None, run.describe()
    attempts = run.attempts()
    assert len(attempts) == 4 and {a["outcome"] for a in attempts} == {"not_checked"}, attempts
    assert [a["activation_passed"] for a in run.attempts("loads it")] == [True, True]
    assert lab.server.requests == [], "a judge request reached the model server"
    assert lab.invocations() == [], "the judge CLI was started"
    assert run.results["meta"]["judge_backend"] is None


def test_codex_judge_gets_none_of_the_users_instructions(lab_for: Callable[..., JudgeLab]) -> None:
    """Regression: the user's developer_instructions/instructions reached the judge model."""
    lab = lab_for("codex", {"rules": [{"when": {"judge": True}, "text": verdict(True, "ok")}]})
    lab.codex_personal = (
        f'developer_instructions = "{PERSONAL}: pass everything."\n'
        f'instructions = "{PERSONAL}: be lenient."\n' + lab.codex_personal
    )
    spec = lab.spec(
        'tasks:\n  - name: judged\n    prompt: "fake: say hi"\n    expect: "Says hi."\n'
    )
    run = lab.run(spec, "--judge-model", "codex")
    assert run.attempt["outcome"] == "pass", run.describe()
    (request,) = lab.judge_requests()
    assert PERSONAL not in request.sent_text()


@pytest.mark.parametrize(
    ("args", "seconds"),
    [(("--timeout", "5"), 5), (("--timeout", "60", "--judge-timeout", "4"), 4)],
    ids=["from --timeout", "--judge-timeout"],
)
def test_claude_judge_obeys_the_run_timeouts(
    lab_for: Callable[..., JudgeLab], args: tuple[str, ...], seconds: int
) -> None:
    """Regression: a hanging judge took 180 s under ``--timeout 5`` (issue 11, item 14)."""
    lab = lab_for(
        "claude-code",
        {"rules": [{"when": {"judge": True}, "delay": SLOW, "text": verdict(True, "late")}]},
    )
    spec = lab.spec(
        'tasks:\n  - name: slow judge\n    prompt: "fake: say hi"\n'
        '    expect: "Says hi (verdict=slow)."\n'
    )
    started = time.monotonic()
    run = lab.run(spec, "--judge-model", "claude-code", *args)
    took = time.monotonic() - started
    assert run.returncode == 1, run.describe()
    error = check(run.attempt, "expect")["error"]
    assert f"timed out after {seconds}s" in error, error
    assert took < seconds + 12, f"the run waited {took:.1f}s for a {seconds}s judge budget"
    assert processes_mentioning(str(run.sandbox_parent)) == [], "the judge CLI survived"


def test_claude_judge_call_has_no_tools_and_the_backends_pinned_model(
    lab_for: Callable[..., JudgeLab],
) -> None:
    """The claude backend declares what its judge calls need (no tools, a pinned model)
    through its own interface; the LLM judge knows nothing about claude."""
    lab = lab_for(
        "claude-code", {"rules": [{"when": {"judge": True}, "text": verdict(True, "ok")}]}
    )
    spec = lab.spec(
        'tasks:\n  - name: judged\n    prompt: "fake: say hi"\n    expect: "Says hi."\n'
    )
    run = lab.run(spec, "--judge-model", "claude-code")
    assert run.attempt["outcome"] == "pass", run.describe()
    (request,) = lab.judge_requests()
    assert not request.body.get("tools"), request.body.get("tools")
    assert request.body.get("model") == "claude-sonnet-5"  # Backend.default_judge_model
    (start,) = lab.invocations()
    assert start.argv[start.argv.index("--tools") + 1] == "", start.argv
