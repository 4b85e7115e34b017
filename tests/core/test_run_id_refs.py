"""Run ids as ``caliper list`` shows them are accepted by ``report`` and ``compare`` (issue 11
item 21), through the real ``caliper`` script with the fake agent."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from caliper_fakeagent.harness import CALIPER, Workspace

SPEC = """\
tasks:
  - name: t
    prompt: "fake: say done"
    assert: "assert True"
"""


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    space = Workspace.create(tmp_path_factory.mktemp("run-ids"))
    spec = space.spec(SPEC)
    for _ in range(2):
        done = space.run(spec, "--k", "1")
        assert done.returncode == 0, done.stderr
    return space


def caliper(space: Workspace, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CALIPER), *args], cwd=space.root, env=space.env(), capture_output=True, text=True
    )


def listed_ids(space: Workspace) -> list[str]:
    done = caliper(space, "list", "demo", "--format", "json")
    assert done.returncode == 0, done.stderr
    return [row["run_id"] for row in json.loads(done.stdout)]


def test_report_accepts_a_run_id_from_list(two_runs):
    newest, oldest = listed_ids(two_runs)
    for run_id in (oldest, f"demo/{oldest}"):
        done = caliper(two_runs, "report", run_id, "--format", "json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["meta"]["run_id"] == oldest
    shown = caliper(two_runs, "report", newest)
    assert shown.returncode == 0, shown.stderr
    assert newest in shown.stdout


def test_compare_accepts_run_ids_from_list(two_runs):
    newest, oldest = listed_ids(two_runs)
    done = caliper(two_runs, "compare", oldest, newest, "--format", "json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert oldest in json.dumps(data) and newest in json.dumps(data)


def test_an_unknown_run_id_says_where_it_looked(two_runs):
    done = caliper(two_runs, "report", "1999-01-01T00-00-00Z")
    assert done.returncode == 2
    assert "No saved run with id 1999-01-01T00-00-00Z" in done.stderr
    assert "caliper list" in done.stderr


def test_a_run_id_two_specs_share_asks_for_the_spec(two_runs, tmp_path):
    space = Workspace.create(tmp_path)
    shutil.copytree(two_runs.root / ".caliper", space.root / ".caliper")
    results = space.root / ".caliper" / "results"
    shutil.copytree(results / "demo", results / "other")
    (run_id, _) = listed_ids(space)
    done = caliper(space, "report", run_id)
    assert done.returncode == 2
    assert f"demo/{run_id}" in done.stderr and f"other/{run_id}" in done.stderr
    assert caliper(space, "report", f"other/{run_id}").returncode == 0
