"""LLM judges in a run: --judge-model resolved lazily, verdicts and engine recorded in meta."""

from __future__ import annotations

from caliper_fakeagent.harness import Workspace


def test_expect_judge_runs_through_the_judge_engine(tmp_path):
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: judged pass
            prompt: "fake: say hello there"
            expect: "Says hello (fake-judge: pass)"
          - name: judged fail
            prompt: "fake: say go away"
            expect: "Says hello (fake-judge: fail)"
          - name: judge rambles
            prompt: "fake: say hello"
            expect: "Says hello (fake-judge: garbage)"
        """)
    run = space.run(spec, "--k", "1", "--judge-model", "fake")
    assert run.returncode == 0, run.stderr
    assert run.attempts("judged pass")[0]["outcome"] == "pass"
    failed = run.attempts("judged fail")[0]
    assert failed["outcome"] == "task_fail"
    assert "fake judge: fail" in failed["reason"]
    assert run.attempts("judge rambles")[0]["outcome"] == "judge_error"
    meta = run.results["meta"]
    assert meta["judge_backend"] == "fake"
    assert meta["judge_model"] == "fake-model-1"
    assert meta["judge_prompt_version"]
    assert list(space.sandboxes.iterdir()) == []


def test_llm_judge_is_skipped_after_a_failed_assert_and_never_resolved(tmp_path):
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: wrong file
            prompt: "fake: say hi"
            expect: "Says hi"
            assert: "assert False, 'no output file'"
        """)
    # the judge engine does not exist, but it is never needed: the assert fails first
    run = space.run(spec, "--k", "1", "--judge-model", "no-such-backend:x")
    assert run.returncode == 0, run.stderr
    (attempt,) = run.attempts("wrong file")
    assert attempt["outcome"] == "task_fail"
    assert "no output file" in attempt["reason"]
    expect = next(c for c in attempt["checks"] if c["key"] == "expect")
    assert expect["passed"] is None and expect["reason"].startswith("not run")
    assert run.results["meta"]["judge_backend"] is None


def test_unknown_judge_model_stops_the_run_when_a_judge_needs_it(tmp_path):
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: judged
            prompt: "fake: say hi"
            expect: "Says hi"
        """)
    run = space.run(spec, "--k", "2", "--workers", "1", "--judge-model", "no-such-backend:x")
    assert run.returncode == 2, run.stderr
    assert "--judge-model" in run.stderr and "no-such-backend" in run.stderr
    assert "Traceback" not in run.stderr
    assert run.results["meta"]["partial"] is True


def test_without_judge_model_the_judge_follows_model(tmp_path):
    """No --judge-model: the judge runs on the --model backend (here the fake one, with the
    model --model named), so a user with one agent CLI needs no other to grade."""
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: judged
            prompt: "fake: say hello there"
            expect: "Says hello (fake-judge: pass)"
        """)
    run = space.run(spec, "--k", "1")  # Workspace.run passes --model fake
    assert run.returncode == 0, run.stderr
    assert run.attempts("judged")[0]["outcome"] == "pass"
    meta = run.results["meta"]
    assert meta["judge_backend"] == "fake"
    assert meta["judge_model"] == "fake-model-1"
