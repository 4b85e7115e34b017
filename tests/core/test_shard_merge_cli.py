"""``caliper run --shard I/N`` and ``caliper merge`` through the real ``caliper`` script with
the fake backend (issue 18): the merged run reports exactly as the unsharded run, ``compare``
works on it, and every reason shards do not belong together is one clear error (exit 2)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from caliper_fakeagent.harness import CALIPER, CaliperRun, Workspace

K = 3
# deterministic outcomes: a pass with a skill load and tokens, a fail, an infra error
SPEC = """\
    skills:
      - ./skills/helper
    tasks:
      - name: alpha
        prompt: |
          fake: load helper
          fake: write out.txt alpha
          fake: usage 100 20
          fake: say done
        assert: "import os; assert os.path.exists('out.txt')"
        activates: [helper]
      - name: beta
        prompt: "fake: usage 50 5\\nfake: say nope"
        assert: "assert False"
      - name: gamma
        prompt: "fake: exit 3"
        assert: "assert True"
    """
FLAGS = ("--k", str(K), "--retries", "0", "--workers", "2")


def _caliper(space: Workspace, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CALIPER), *args],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    space = Workspace.create(tmp_path)
    space.skill("helper")
    return space


def _run(space: Workspace, spec: Path, *args: str, model: str = "fake") -> CaliperRun:
    """``caliper run SPEC --model MODEL ARGS`` to completion (one engine)."""
    done = _caliper(space, "run", str(spec), "--model", model, *args)
    return CaliperRun(done.returncode, done.stdout, done.stderr, space.latest_results())


def _shards(space: Workspace, spec: Path, count: int, *extra: str) -> list[CaliperRun]:
    runs = []
    for index in range(1, count + 1):
        done = _run(space, spec, *FLAGS, "--shard", f"{index}/{count}", *extra)
        assert done.returncode == 0, done.stderr
        runs.append(done)
    return runs


def _keys(data: dict[str, Any]) -> list[tuple[str, int]]:
    return sorted((a["task_name"], a["attempt"]) for t in data["tasks"] for a in t["attempts"])


VOLATILE = {"run_id", "started_at", "finished_at", "shard", "merged_from", "derived_by", "path"}


def _stable(value: Any) -> Any:
    """``value`` without ids, times, wall clocks and the shard bookkeeping."""
    if isinstance(value, dict):
        return {
            k: _stable(v)
            for k, v in value.items()
            if k not in VOLATILE and not any(w in k for w in ("wall", "duration", "seconds"))
        }
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def test_merged_shards_report_exactly_as_the_unsharded_run(space: Workspace) -> None:
    spec = space.spec(SPEC)
    whole = _run(space, spec, *FLAGS)
    assert whole.returncode == 0, whole.stderr
    shards = _shards(space, spec, 3)
    for index, shard in enumerate(shards, start=1):
        meta = shard.results["meta"]
        assert meta["shard"]["index"] == index and meta["shard"]["count"] == 3
        assert meta["shard"]["plan_attempts"] == 9 and meta["shard"]["attempts"] == 3
        assert meta["partial"] is True and f"shard {index}/3" in meta["stop_reason"]
        assert "Partial run: shard" in shard.stdout  # a shard reports on its own
    # the union of the shards is the unsharded plan, no attempt twice
    keys = [key for shard in shards for key in _keys(shard.results)]
    assert sorted(keys) == _keys(whole.results) and len(set(keys)) == len(keys)

    output = space.root / "out" / "merged.json"
    merged = _caliper(
        space, "merge", *(str(s.results_path) for s in shards), "--output", str(output)
    )
    assert merged.returncode == 0, merged.stderr
    assert "Merged 3 shard runs (9 attempts)" in merged.stdout
    stored = sorted((space.root / ".caliper" / "results" / "demo").glob("*.json"))
    assert len(stored) == 5  # the unsharded run, 3 shards, the merged run
    merged_path = max(stored, key=lambda p: p.stat().st_mtime)
    assert output.read_text(encoding="utf-8") == merged_path.read_text(encoding="utf-8")
    saved = json.loads(merged_path.read_text(encoding="utf-8"))
    assert saved["meta"]["run_id"] == merged_path.stem  # a new run id, in the store
    assert saved["meta"]["run_id"] not in {s.results["meta"]["run_id"] for s in shards}
    assert [m["shard"] for m in saved["meta"]["merged_from"]] == ["1/3", "2/3", "3/3"]
    assert [m["run"] for m in saved["meta"]["merged_from"]] == [
        f"demo/{s.results['meta']['run_id']}" for s in shards
    ]
    assert saved["meta"]["shard"] is None and saved["meta"]["partial"] is False
    assert saved["meta"]["derived_by"] == "merge"  # labelled as made from the shards
    assert not list(space.root.rglob(".*.tmp")), "written atomically: no temp file left"

    reports = {}
    for name, path in (("whole", whole.results_path), ("merged", merged_path)):
        done = _caliper(space, "report", str(path), "--format", "json")
        assert done.returncode == 0, done.stderr
        reports[name] = json.loads(done.stdout)
    assert reports["merged"]["scores"]["tasks"], "the report has scores to compare"
    assert [t["successes"] for t in reports["merged"]["scores"]["tasks"]] == [3, 0, 0]
    assert _stable(reports["merged"]) == _stable(reports["whole"])

    for fmt in ("text", "markdown"):
        done = _caliper(space, "report", str(merged_path), "--format", fmt)
        assert done.returncode == 0, done.stderr
        assert "Partial run" not in done.stdout and "partial" not in done.stdout.lower()

    listed = json.loads(_caliper(space, "list", "demo", "--format", "json").stdout)
    assert sorted(r["shard"] for r in listed if r["shard"]) == ["1/3", "2/3", "3/3"]
    assert [r["merged_shards"] for r in listed if r["run_id"] == merged_path.stem] == [3]
    table = _caliper(space, "list", "demo").stdout
    assert "shard 2/3" in table and "merged (3 shards)" in table

    compared = _caliper(space, "compare", str(whole.results_path), str(merged_path))
    assert compared.returncode == 0, compared.stdout + compared.stderr
    data = json.loads(
        _caliper(
            space, "compare", str(whole.results_path), str(merged_path), "--format", "json"
        ).stdout
    )
    assert data["comparable"] is True
    # a lone shard is partial: compare refuses it unless asked
    refused = _caliper(space, "compare", str(whole.results_path), str(shards[0].results_path))
    assert refused.returncode == 2 and "partial" in refused.stderr


def test_more_shards_than_attempts_leave_empty_shards_that_still_merge(space: Workspace) -> None:
    spec = space.spec("""\
        tasks:
          - name: only
            prompt: "fake: say hi"
            assert: "assert True"
        """)
    runs = []
    for index in range(1, 6):  # 5 shards of a 2-attempt plan
        done = _run(space, spec, "--k", "2", "--shard", f"{index}/5")
        assert done.returncode == 0, done.stderr
        runs.append(done)
    counts = [sum(len(t["attempts"]) for t in r.results["tasks"]) for r in runs]
    assert counts == [1, 1, 0, 0, 0]
    merged = _caliper(space, "merge", *(str(r.results_path) for r in runs))
    assert merged.returncode == 0, merged.stderr
    data = json.loads(_caliper(space, "report", "demo", "--format", "json").stdout)
    assert data["meta"]["merged_from"] and _keys(data) == [("only", 1), ("only", 2)]


def _error(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    (first, *_rest) = done.stderr.splitlines()
    assert first.startswith("Error: ")
    return done.stderr


def test_each_mismatch_is_one_clear_error_naming_the_files_and_the_field(
    space: Workspace,
) -> None:
    spec = space.spec(SPEC)
    one, two = _shards(space, spec, 2)
    a, b = str(one.results_path), str(two.results_path)

    text = _error(_caliper(space, "merge", a))
    assert "shard 2/2 is missing (given: 1/2)" in text
    text = _error(_caliper(space, "merge", a, a, b))
    assert "both are shard 1/2" in text and a in text

    other_k = _run(space, spec, "--k", "2", "--retries", "0", "--shard", "2/2")
    text = _error(_caliper(space, "merge", a, str(other_k.results_path)))
    assert f"{a} and {other_k.results_path}" in text and "differ in k (3 vs 2)" in text

    other_n = _run(space, spec, *FLAGS, "--shard", "2/3")
    text = _error(_caliper(space, "merge", a, str(other_n.results_path)))
    assert "differ in shard count (2 vs 3)" in text

    other_engine = _run(space, spec, *FLAGS, "--shard", "2/2", model="fake:fake-model-2")
    text = _error(_caliper(space, "merge", a, str(other_engine.results_path)))
    assert "differ in engine" in text and "fake-model-2" in text

    ablated = _run(space, spec, *FLAGS, "--shard", "2/2", "--ablate", "helper")
    text = _error(_caliper(space, "merge", a, str(ablated.results_path)))
    assert "differ in --ablate (skills)" in text

    (space.root / "skills" / "helper" / "SKILL.md").write_text(
        "---\nname: helper\ndescription: Changed.\n---\nNew body.\n", encoding="utf-8"
    )
    new_skill = _run(space, spec, *FLAGS, "--shard", "2/2")
    text = _error(_caliper(space, "merge", a, str(new_skill.results_path)))
    assert "differ in skills (name → content hash)" in text

    spec.write_text(spec.read_text(encoding="utf-8") + "# edited\n", encoding="utf-8")
    new_spec = _run(space, spec, *FLAGS, "--shard", "2/2")
    text = _error(_caliper(space, "merge", a, str(new_spec.results_path)))
    assert f"{a} and {new_spec.results_path}" in text and "differ in spec hash" in text

    plain = _run(space, spec, *FLAGS)
    text = _error(_caliper(space, "merge", a, str(plain.results_path)))
    assert "is not a shard run" in text

    # a shard with an attempt removed by hand: none may be missing
    data = json.loads(two.results_path.read_text(encoding="utf-8"))
    dropped = data["tasks"][0]["attempts"].pop()
    cut = space.root / "cut.json"
    cut.write_text(json.dumps(data), encoding="utf-8")
    text = _error(_caliper(space, "merge", a, str(cut)))
    assert f"lacks 1 of its attempts ('{dropped['task_name']}' #{dropped['attempt']})" in text
    assert "--resume" in text
    # the same attempt copied into the other shard: no overlap
    data = json.loads(one.results_path.read_text(encoding="utf-8"))
    data["tasks"][0]["attempts"].append(dropped)
    doubled = space.root / "doubled.json"
    doubled.write_text(json.dumps(data), encoding="utf-8")
    text = _error(_caliper(space, "merge", str(doubled), b))
    assert f"both hold attempt {dropped['attempt']} of task 'alpha'" in text

    missing = _caliper(space, "merge", str(space.root / "nope.json"), b)
    assert "No results file at" in _error(missing)


def test_shard_flag_errors_and_a_killed_shard_resumes_to_its_own_slice(
    space: Workspace,
) -> None:
    spec = space.spec(SPEC)
    for bad in ("0/2", "3/2", "two"):
        done = _run(space, spec, "--shard", bad)
        assert done.returncode == 2 and "--shard" in done.stderr, done.stderr
    auto = _run(space, spec, "--k", "auto", "--min-score", "0.5", "--shard", "1/2")
    assert auto.returncode == 2 and "--k auto" in auto.stderr

    first, second = _shards(space, spec, 2)
    slice_keys = _keys(second.results)
    # as if the shard had been stopped early: its saved run lacks one attempt
    path = second.results_path
    data = json.loads(path.read_text(encoding="utf-8"))
    lost = data["tasks"][1]["attempts"].pop(0)
    path.write_text(json.dumps(data), encoding="utf-8")
    refused = _run(space, spec, "--resume", second.results["meta"]["run_id"], "--shard", "1/2")
    assert refused.returncode == 2 and "that run is shard 2/2" in refused.stderr
    resumed = _run(space, spec, "--resume", second.results["meta"]["run_id"])
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.results["meta"]["shard"]["index"] == 2
    assert _keys(resumed.results) == slice_keys
    assert (lost["task_name"], lost["attempt"]) in _keys(resumed.results)
    merged = _caliper(space, "merge", str(first.results_path), str(resumed.results_path))
    assert merged.returncode == 0, merged.stderr


def test_merge_help_lists_examples_and_exit_codes(space: Workspace) -> None:
    done = _caliper(space, "merge", "--help")
    assert done.returncode == 0
    assert "Examples:" in done.stdout and "Exit codes:" in done.stdout
    assert shutil.which(str(CALIPER))


def test_a_setting_that_does_not_stop_a_merge_is_noted(space: Workspace) -> None:
    spec = space.spec(SPEC)
    one = _run(space, spec, *FLAGS, "--shard", "1/2")
    two = _run(space, spec, *FLAGS, "--shard", "2/2", "--timeout", "77")
    merged = _caliper(space, "merge", str(one.results_path), str(two.results_path))
    assert merged.returncode == 0, merged.stderr
    assert "Note: the shards differ in --timeout (1/2: 120.0, 2/2: 77.0)" in merged.stderr
    assert "merged from 2 shards" in merged.stdout


def test_merge_saves_where_the_user_is_never_into_a_recorded_spec_path(
    space: Workspace, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp_path = tmp_path_factory.mktemp("other-machine")  # no .caliper/ at or above it
    spec = space.spec("""\
        tasks:
          - name: only
            prompt: "fake: say hi"
            assert: "assert True"
        """)
    runs = [_run(space, spec, "--k", "2", "--shard", f"{i}/2") for i in (1, 2)]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    # the shards come from another machine: their recorded spec path does not exist here
    gone = tmp_path / "ci-runner" / "checkout"
    elsewhere = tmp_path / "downloads"
    elsewhere.mkdir()
    files = []
    for number, done in enumerate(runs, start=1):
        data = dict(done.results)
        data["meta"] = {**data["meta"], "spec_path": str(gone / "demo.eval.yaml")}
        path = elsewhere / f"shard-{number}.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        files.append(str(path))
    merged = subprocess.run(
        [str(CALIPER), "merge", *files],
        cwd=elsewhere,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert merged.returncode == 0, merged.stderr
    assert not (tmp_path / "ci-runner").exists(), "no folder made at the recorded path"
    saved = list((elsewhere / ".caliper" / "results" / "demo").glob("*.json"))
    assert len(saved) == 1 and str(saved[0]) in merged.stdout.replace("\n", "")
    # with a .caliper/ above the current folder, the merged run goes there
    inner = elsewhere / "sub"
    inner.mkdir()
    again = subprocess.run(
        [str(CALIPER), "merge", *files, "--output", str(inner / "copy.json")],
        cwd=inner,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert again.returncode == 0, again.stderr
    assert len(list((elsewhere / ".caliper" / "results" / "demo").glob("*.json"))) == 2
    assert (inner / "copy.json").is_file() and not (inner / ".caliper").exists()
    assert not (tmp_path / "ci-runner").exists()
