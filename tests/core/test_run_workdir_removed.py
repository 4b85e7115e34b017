"""An agent that deletes its own working directory: a task failure saying so, not a
``judge_error``, and the task's ``cleanup:`` still runs (issue 11, item 6)."""

from __future__ import annotations

from caliper_fakeagent.harness import Workspace

REASON = "the agent removed its own working directory, so the checks could not find its work"


def test_agent_that_deletes_its_workdir_fails_the_task(tmp_path):
    space = Workspace.create(tmp_path)
    marks = tmp_path / "marks"
    marks.mkdir()
    space.skill("helper")
    spec = space.spec(f"""\
        skills: [./skills/helper]
        tasks:
          - name: self destruct
            prompt: |
              fake: load helper
              fake: bash rm -rf "$PWD"
              fake: say all clean
            assert: "assert True"
            activates: [helper]
            cleanup: pwd > {marks}/cleanup-ran
        """)
    run = space.run(spec, "--k", "1")
    assert run.returncode == 0, run.stderr
    (attempt,) = run.attempts("self destruct")
    assert attempt["outcome"] == "task_fail", attempt
    assert attempt["reason"] == REASON
    checks = {c["key"]: c for c in attempt["checks"]}
    assert checks["assert"]["passed"] is None
    assert checks["assert"]["details"]["workdir_removed"] is True
    # the activation scoreboard still reads the transcript
    assert attempt["activation_passed"] is True, attempt
    # cleanup ran in a working directory that exists again, and reported no error
    assert (marks / "cleanup-ran").read_text().strip().endswith("/work")
    assert not attempt.get("error"), attempt
    assert list(space.sandboxes.iterdir()) == []


def test_assert_that_deletes_the_workdir_does_not_break_cleanup(tmp_path):
    space = Workspace.create(tmp_path)
    marks = tmp_path / "marks"
    marks.mkdir()
    spec = space.spec(f"""\
        tasks:
          - name: check removes it
            prompt: "fake: say hi"
            assert: |
              import os, shutil
              shutil.rmtree(os.getcwd())
            cleanup: touch {marks}/cleanup-ran
        """)
    run = space.run(spec, "--k", "1")
    (attempt,) = run.attempts("check removes it")
    assert attempt["outcome"] == "pass", attempt
    assert (marks / "cleanup-ran").exists()
    assert not attempt.get("error"), attempt
