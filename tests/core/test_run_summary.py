"""The per-run summary ``caliper list SPEC`` reads (issue 34): saved beside every run the store
writes (a fresh run and each derived one: regrade, retry, merge), equal to a full decode and
score of the run, and never trusted for a file that changed since it was written."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from caliper.results.run_summary import read_summary, summarize, summary_path
from caliper.results.store import load_run
from caliper_fakeagent.harness import CALIPER, Workspace

SPEC = """\
    tasks:
      - name: passes
        prompt: "fake: say all done"
        expect: "The agent says it is done. fake-judge: pass"
      - name: fails
        prompt: "fake: say nothing useful"
        assert: |
          assert False, "never"
      - name: flaky start
        prompt: |
          fake: rate-limit-first 1 COUNTER
          fake: say done
        expect: "The agent says done. fake-judge: pass"
    """


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path)


def _caliper(space: Workspace, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CALIPER), *args],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _run_files(space: Workspace) -> list[Path]:
    folder = space.root / ".caliper" / "results" / "demo"
    return sorted(p for p in folder.glob("*.json") if not p.name.startswith("."))


def _listed(space: Workspace) -> dict[str, dict]:
    done = _caliper(space, "list", "demo", "--format", "json")
    assert done.returncode == 0, done.stderr
    return {row["run_id"]: row for row in json.loads(done.stdout)}


def _assert_summaries_match_a_full_decode(space: Workspace) -> None:
    files = _run_files(space)
    for path in files:
        saved = read_summary(path)
        assert saved is not None, f"no summary saved beside {path.name}"
        assert saved == json.loads(json.dumps(summarize(load_run(path, transcripts=False))))
    from_summaries = _listed(space)
    for path in files:
        summary_path(path).unlink()
    decoded = _listed(space)  # computed from the runs, and saved again
    assert from_summaries == decoded
    assert all(read_summary(path) is not None for path in files)


def test_fresh_and_derived_runs_each_save_a_summary_equal_to_a_full_decode(
    space: Workspace,
) -> None:
    spec = space.spec(SPEC.replace("COUNTER", str(space.root / "count")))
    first = space.run(
        spec, "--k", "2", "--judge-model", "fake", "--keep-workdirs", "--retries", "0"
    )
    assert first.returncode != 2, first.stderr
    run_id = first.results["meta"]["run_id"]
    retried = _caliper(space, "retry", run_id)
    assert retried.returncode in (0, 1), retried.stderr
    spec.write_text(spec.read_text().replace("fake-judge: pass", "fake-judge: fail"))
    regraded = _caliper(space, "regrade", run_id)
    assert regraded.returncode in (0, 1), regraded.stderr
    one = space.run(spec, "--k", "1", "--judge-model", "fake", "--shard", "1/2")
    two = space.run(spec, "--k", "1", "--judge-model", "fake", "--shard", "2/2")
    merged = _caliper(space, "merge", str(one.results_path), str(two.results_path))
    assert merged.returncode in (0, 1), merged.stderr
    kinds = sorted(
        str(json.loads(p.read_text())["meta"].get("derived_by")) for p in _run_files(space)
    )
    assert kinds == ["None", "None", "None", "merge", "regrade", "retry"], kinds
    scores = {row["score"] for row in _listed(space).values()}
    assert len(scores) > 1  # the runs differ, so a summary mixed up between runs would show
    _assert_summaries_match_a_full_decode(space)


def test_a_summary_is_read_when_it_matches_the_file_and_ignored_when_the_file_changed(
    space: Workspace,
) -> None:
    spec = space.spec(SPEC.replace("COUNTER", str(space.root / "count")))
    done = space.run(spec, "--k", "1", "--judge-model", "fake")
    path = done.results_path
    run_id = done.results["meta"]["run_id"]
    true_score = _listed(space)[run_id]["score"]
    sidecar = summary_path(path)
    data = json.loads(sidecar.read_text())
    data["row"]["score"] = 0.123
    sidecar.write_text(json.dumps(data))
    assert _listed(space)[run_id]["score"] == 0.123  # list reads it: it did not decode the run
    path.write_text(path.read_text() + "\n")  # the run file changed: the summary is stale
    assert _listed(space)[run_id]["score"] == true_score
    assert read_summary(path)["score"] == true_score  # and saved afresh


def test_a_run_saved_without_a_summary_is_listed_and_summarised_once(space: Workspace) -> None:
    spec = space.spec(SPEC.replace("COUNTER", str(space.root / "count")))
    done = space.run(spec, "--k", "1", "--judge-model", "fake")
    summary_path(done.results_path).unlink()
    listed = _listed(space)[done.results["meta"]["run_id"]]
    assert listed["attempts"] == 3 and listed["tasks"] == 3
    assert read_summary(done.results_path) == {
        k: v for k, v in listed.items() if k not in ("run_id", "path")
    }
