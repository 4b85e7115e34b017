"""``caliper regrade`` and ``caliper run --keep-workdirs`` through the real ``caliper`` script
(fake agent, fake judge backend; issue 15): a changed ``expect:`` re-grades from the saved
transcript, a changed ``assert:`` against the kept working directory."""

from __future__ import annotations

import json
import subprocess
import tarfile
from pathlib import Path

import pytest

from caliper_fakeagent.harness import CALIPER, Workspace

PROMPT = "fake: write out.txt alpha\\nfake: bash ln -s /etc/hostname leak; ln -s out.txt inside"


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path)


def _regrade(space: Workspace, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CALIPER), "regrade", *args],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _runs(space: Workspace) -> list[dict]:
    folder = space.root / ".caliper" / "results" / "demo"
    files = sorted(folder.glob("*.json"), key=lambda f: f.stat().st_mtime_ns)
    return [json.loads(f.read_text()) for f in files]


def test_regrade_applies_a_changed_expect_to_the_saved_transcript(space: Workspace) -> None:
    spec = space.spec(f"""\
        tasks:
          - name: judged
            prompt: "{PROMPT}\\nfake: say all done"
            expect: "The agent says it is done. fake-judge: pass"
        """)
    parent = space.run(spec, "--k", "2", "--judge-model", "fake")
    assert parent.returncode == 0, parent.stderr
    assert [a["outcome"] for a in parent.attempts("judged")] == ["pass", "pass"]
    spec.write_text(
        spec.read_text().replace("fake-judge: pass", "fake-judge: fail"), encoding="utf-8"
    )
    done = _regrade(space, parent.results["meta"]["run_id"])
    assert done.returncode == 0, done.stderr
    first, child = _runs(space)
    assert first == parent.results  # the parent is untouched
    meta = child["meta"]
    assert meta["parent_run"] == f"demo/{first['meta']['run_id']}"
    assert meta["derived_by"] == "regrade"
    assert any("spec changed" in c for c in meta["changes"])
    assert meta["spec_hash"] != first["meta"]["spec_hash"]
    attempts = child["tasks"][0]["attempts"]
    assert [a["outcome"] for a in attempts] == ["task_fail", "task_fail"]
    assert attempts[0]["final_answer"] == parent.attempts("judged")[0]["final_answer"]


def test_regrade_reruns_a_changed_assert_against_the_kept_workdir(space: Workspace) -> None:
    check = "assert open('out.txt').read().strip() == '{}'"
    spec = space.spec(f"""\
        tasks:
          - name: writes
            prompt: "{PROMPT}"
            assert: "{check.format("alpha")}"
        """)
    parent = space.run(spec, "--k", "1", "--keep-workdirs")
    assert parent.returncode == 0, parent.stderr
    (attempt,) = parent.attempts("writes")
    assert attempt["outcome"] == "pass"
    archive = parent.results_path.parent / attempt["workdir_archive"]
    with tarfile.open(archive) as tar:
        names = set(tar.getnames())
    assert {"out.txt", "inside"} <= names and "leak" not in names  # no link out is kept
    assert "symlink" in attempt["workdir_note"]
    assert not any("private" in n or "home" in n for n in names)

    same = _regrade(space, str(parent.results_path))  # the unchanged check on the copy
    assert same.returncode == 0, same.stderr
    assert _runs(space)[-1]["tasks"][0]["attempts"][0]["outcome"] == "pass"

    spec.write_text(spec.read_text().replace("'alpha'", "'beta'"), encoding="utf-8")
    done = _regrade(space, str(parent.results_path))
    assert done.returncode == 0, done.stderr
    child = _runs(space)[-1]
    (regraded,) = child["tasks"][0]["attempts"]
    assert regraded["outcome"] == "task_fail"
    assert "FileNotFoundError" not in regraded["reason"]
    assert any("spec changed" in c for c in child["meta"]["changes"])


def test_regrade_of_an_assert_without_kept_workdirs_is_refused(space: Workspace) -> None:
    spec = space.spec(f"""\
        tasks:
          - name: writes
            prompt: "{PROMPT}"
            assert: "assert True"
        """)
    parent = space.run(spec, "--k", "1")
    done = _regrade(space, parent.results["meta"]["run_id"])
    assert done.returncode == 2
    assert "--keep-workdirs" in done.stderr and "Traceback" not in done.stderr
    assert len(_runs(space)) == 1


def test_keep_workdirs_cap_says_what_it_left_out(space: Workspace) -> None:
    spec = space.spec(f"""\
        tasks:
          - name: writes
            prompt: "{PROMPT}"
            assert: "assert True"
        """)
    run = space.run(spec, "--k", "1", "--keep-workdirs", "--workdir-max-bytes", "3")
    (attempt,) = run.attempts("writes")
    assert "per-attempt cap of 3 bytes" in attempt["workdir_note"]
    with tarfile.open(run.results_path.parent / attempt["workdir_archive"]) as tar:
        assert "out.txt" not in tar.getnames()


def test_regrade_without_judge_model_grades_with_the_engine_that_graded_the_run(
    space: Workspace,
) -> None:
    """The run's judge followed its --model (issue 16), so regrade with no --judge-model uses
    that same engine, not the claude-code default."""
    spec = space.spec(f"""\
        tasks:
          - name: judged
            prompt: "{PROMPT}\\nfake: say all done"
            expect: "The agent says it is done. fake-judge: pass"
        """)
    parent = space.run(spec, "--k", "1")
    assert parent.returncode == 0, parent.stderr
    assert parent.results["meta"]["judge_backend"] == "fake"
    spec.write_text(
        spec.read_text().replace("fake-judge: pass", "fake-judge: fail"), encoding="utf-8"
    )
    done = _regrade(space, parent.results["meta"]["run_id"])
    assert done.returncode == 0, done.stderr
    _, child = _runs(space)
    assert child["meta"]["judge_backend"] == "fake"
    assert [a["outcome"] for a in child["tasks"][0]["attempts"]] == ["task_fail"]


def test_regrade_of_a_truncated_kept_archive_is_exit_2_naming_it(space: Workspace) -> None:
    """A kept working directory cut short (a gzip stream that ends early) is a damaged file,
    exit 2 with the archive named, never "Aborted." and 130 as if Ctrl-C had been pressed."""
    spec = space.spec(f"""\
        tasks:
          - name: writes
            prompt: "{PROMPT}"
            assert: "assert open('out.txt').read().strip() == 'alpha'"
        """)
    parent = space.run(spec, "--k", "1", "--keep-workdirs")
    assert parent.returncode == 0, parent.stderr
    (attempt,) = parent.attempts("writes")
    archive = parent.results_path.parent / attempt["workdir_archive"]
    data = archive.read_bytes()
    archive.write_bytes(data[: len(data) // 2])
    spec.write_text(spec.read_text().replace("'alpha'", "'beta'"), encoding="utf-8")
    done = _regrade(space, str(parent.results_path))
    assert done.returncode == 2, done.stderr
    assert str(archive) in done.stderr and "Aborted" not in done.stderr
    assert "Traceback" not in done.stderr


def test_regrade_records_the_judge_model_the_way_a_run_decides_it(space: Workspace) -> None:
    """`--judge-model BACKEND` (no model) with CALIPER_JUDGE_MODEL set: the run records the
    model the variable names, and so does regrade with the same flag (it once recorded no
    model, and a judge-engine change that did not happen, although the judge asked that
    model)."""
    spec = space.spec(f"""\
        tasks:
          - name: judged
            prompt: "{PROMPT}\\nfake: say all done"
            expect: "The agent says it is done. fake-judge: pass"
        """)
    env = {"CALIPER_JUDGE_MODEL": "judge-env-1"}
    parent = space.run(spec, "--k", "1", "--judge-model", "fake", env=space.env(**env))
    assert parent.returncode == 0, parent.stderr
    assert parent.results["meta"]["judge_model"] == "judge-env-1"
    done = subprocess.run(
        [str(CALIPER), "regrade", parent.results["meta"]["run_id"], "--judge-model", "fake"],
        cwd=space.root, env=space.env(**env), capture_output=True, text=True, timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    _, child = _runs(space)
    assert child["meta"]["judge_backend"] == "fake"
    assert child["meta"]["judge_model"] == "judge-env-1"
    assert not [c for c in child["meta"]["changes"] if c.startswith("judge engine")]


def test_regrade_of_a_tools_check_needs_no_kept_workdir(space: Workspace) -> None:
    """A ``tools:`` check reads only the saved transcript, so a run without --keep-workdirs
    regrades it (it was once refused like an ``assert:``)."""
    spec = space.spec("""\
        tasks:
          - name: calls
            prompt: "fake: bash echo hi"
            tools:
              - called: Bash
        """)
    parent = space.run(spec, "--k", "1")
    assert parent.returncode == 0, parent.stderr
    assert [a["outcome"] for a in parent.attempts("calls")] == ["pass"]
    spec.write_text(spec.read_text().replace("- called:", "- not_called:"), encoding="utf-8")
    done = _regrade(space, parent.results["meta"]["run_id"])
    assert done.returncode == 0, done.stderr
    _, child = _runs(space)
    (attempt,) = child["tasks"][0]["attempts"]
    assert attempt["outcome"] == "task_fail", attempt
    assert "was called" in json.dumps(attempt["checks"]), attempt["checks"]
