"""Every attempt outcome, through the real ``caliper`` console script and the fake agent."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from caliper_fakeagent.harness import Workspace, pid_alive


@pytest.fixture(scope="module")
def outcomes_run(tmp_path_factory: pytest.TempPathFactory):
    """One run whose tasks end in every outcome (k=1, timeout 1.5s)."""
    space = Workspace.create(tmp_path_factory.mktemp("outcomes"))
    space.skill("greeter")
    pidfile = space.root / "grandchild.pid"
    (space.root / "secret-notes.txt").write_text("the answer\n")
    spec = space.spec(f"""\
        skills:
          - ./skills/greeter
        sandbox:
          forbidden_files:
            - "secret-notes\\\\.txt$"
        tasks:
          - name: passes
            prompt: |
              fake: load greeter
              fake: write out.txt hello
              fake: say wrote it
              fake: usage 11 7 3 2
              fake: model fake-large-2
            assert: |
              from pathlib import Path
              assert Path("out.txt").read_text().strip() == "hello"
            activates: [greeter]
          - name: fails the assert
            prompt: "fake: say nothing written"
            assert: |
              from pathlib import Path
              assert Path("out.txt").exists(), "out.txt was not created"
          - name: runs out of turns
            prompt: "fake: max-turns"
            assert: "assert True"
          - name: reads the spec
            prompt: "fake: read {space.root / "demo.eval.yaml"}"
            assert: "assert True"
          - name: reads a forbidden file
            prompt: "fake: read {space.root / "secret-notes.txt"}"
            assert: "assert True"
          - name: crashes
            prompt: "fake: exit 3"
            assert: "assert True"
          - name: rate limited
            prompt: "fake: rate-limit"
            assert: "assert True"
          - name: prints garbage
            prompt: "fake: garbage"
            assert: "assert True"
          - name: hangs
            prompt: |
              fake: grandchild {pidfile}
              fake: sleep 30
            assert: "assert True"
          - name: judge hangs
            prompt: "fake: say fine"
            assert: |
              import time
              time.sleep(30)
          - name: unchecked
            prompt: "fake: say hi"
            activates: [greeter]
        """)
    started = time.monotonic()
    run = space.run(spec, "--k", "1", "--workers", "4", "--timeout", "1.5")
    return space, run, pidfile, time.monotonic() - started


def outcome(run, task: str) -> dict:
    (attempt,) = run.attempts(task)
    return attempt


def test_exit_code_zero_with_usable_attempts(outcomes_run):
    _, run, _, _ = outcomes_run
    assert run.returncode == 0, run.stderr


def test_pass_records_usage_model_and_activation(outcomes_run):
    _, run, _, _ = outcomes_run
    attempt = outcome(run, "passes")
    assert attempt["outcome"] == "pass"
    assert attempt["activated"] == ["greeter"]
    assert attempt["activation_passed"] is True
    assert attempt["usage"] == {
        "input_tokens": 11,
        "output_tokens": 7,
        "cache_read_tokens": 3,
        "cache_creation_tokens": 2,
    }
    assert attempt["model"] == "fake-large-2"
    assert attempt["final_answer"] == "wrote it"
    assert [c["key"] for c in attempt["checks"]] == ["assert", "activates"]
    assert run.results["meta"]["model"] in {"fake-large-2", "fake-model-1"}


def test_failed_assert_is_task_fail_with_reason(outcomes_run):
    _, run, _, _ = outcomes_run
    attempt = outcome(run, "fails the assert")
    assert attempt["outcome"] == "task_fail"
    assert "out.txt was not created" in attempt["reason"]


def test_max_turns_is_task_fail(outcomes_run):
    _, run, _, _ = outcomes_run
    attempt = outcome(run, "runs out of turns")
    assert attempt["outcome"] == "task_fail"
    assert "maximum number of turns" in attempt["reason"]


def test_reading_the_spec_is_cheat(outcomes_run):
    _, run, _, _ = outcomes_run
    attempt = outcome(run, "reads the spec")
    assert attempt["outcome"] == "cheat"
    assert any("demo.eval.yaml" in r for r in attempt["forbidden_reads"])


def test_forbidden_files_pattern_is_cheat(outcomes_run):
    _, run, _, _ = outcomes_run
    attempt = outcome(run, "reads a forbidden file")
    assert attempt["outcome"] == "cheat"
    assert "secret-notes.txt" in attempt["forbidden_reads"][0]


@pytest.mark.parametrize(
    ("task", "words"),
    [
        ("crashes", "exited with status 3"),
        ("rate limited", "rate limited"),
        ("prints garbage", "unparseable"),
    ],
)
def test_harness_failures_are_infra_error(outcomes_run, task, words):
    _, run, _, _ = outcomes_run
    attempt = outcome(run, task)
    assert attempt["outcome"] == "infra_error"
    assert words in attempt["reason"]


def test_timeout_kills_the_grandchild(outcomes_run):
    _, run, pidfile, elapsed = outcomes_run
    attempt = outcome(run, "hangs")
    assert attempt["outcome"] == "timeout"
    pid = int(pidfile.read_text())
    assert not pid_alive(pid), f"grandchild {pid} survived the attempt"
    assert elapsed < 20


def test_judge_that_cannot_decide_is_judge_error(outcomes_run):
    _, run, _, _ = outcomes_run
    attempt = outcome(run, "judge hangs")
    assert attempt["outcome"] == "judge_error"
    assert "timed out" in attempt["reason"]


def test_no_outcome_judge_is_not_checked(outcomes_run):
    _, run, _, _ = outcomes_run
    attempt = outcome(run, "unchecked")
    assert attempt["outcome"] == "not_checked"
    assert attempt["activation_passed"] is False
    assert attempt["activated"] == []


def test_sandboxes_are_deleted_and_real_home_untouched(outcomes_run):
    space, _, _, _ = outcomes_run
    assert list(space.sandboxes.iterdir()) == []
    assert space.files_in_real_home() == []


def test_meta_describes_the_run(outcomes_run):
    _, run, _, _ = outcomes_run
    meta = run.results["meta"]
    assert meta["backend"] == "fake"
    assert meta["k"] == 1 and meta["workers"] == 4 and meta["timeout"] == 1.5
    assert meta["partial"] is False
    assert meta["caliper_version"]
    assert meta["plugin_versions"].get("caliper-fakeagent") == "1.0.0"
    assert [s["name"] for s in meta["skill_snapshots"]] == ["greeter"]
    assert meta["skill_snapshots"][0]["ablated"] is False
    assert len(meta["spec_hash"]) == 64
    assert meta["judge_model"] is None
    assert Path(meta["spec_path"]).name == "demo.eval.yaml"
