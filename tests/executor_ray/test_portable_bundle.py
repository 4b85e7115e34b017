"""caliper.runner.run.portable and caliper.remote: a prepared run as a secret-free bundle,
rebuilt "on a node".

The node here is this machine with another unpack folder and another environment, which is
what a remote node sees: the bundle's bytes and its own environment, nothing else.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from caliper.errors import SetupError
from caliper.host.plugins import PluginHost
from caliper.remote import _rebuild as rebuild
from caliper.remote import _run_portable as run_job
from caliper.runner.run.control import RunController
from caliper.runner.run.options import RunOptions
from caliper.runner.run.portable import PortableRun, pack, unpack
from caliper.runner.run.prepare import prepare_run
from caliper.system.skill_tree import content_hash
from caliper_fakeagent.harness import FAKE_AGENT, Workspace

SECRET = "s3cr3t-value-for-the-bundle-test"
SPEC = """\
skills:
  - skills/helper
mcp:
  echo:
    command: python3
    args: [-m, caliper.testing.mcp_echo]
    env:
      ECHO_TOKEN: "Bearer ${BUNDLE_TOKEN}"
sandbox:
  extra_path: [bin]
tasks:
  - name: writes
    prompt: |
      fake: load helper
      fake: bash tool.sh > out.txt
      fake: say done
    assert: checks/out_ok.py
  - name: fails
    prompt: "fake: say nothing"
    assert: "assert False, 'nothing was written'"
  - name: sleeps
    prompt: "fake: sleep 600"
    assert: "assert True"
"""


@pytest.fixture
def space(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """A spec folder with a skill, an assert file and its neighbour, a PATH script, and
    things a bundle must leave out (results, version control, a link out)."""
    space = Workspace.create(tmp_path / "project")
    space.skill("helper", body="Use tool.sh.")
    (space.root / "bin").mkdir()
    tool = space.root / "bin" / "tool.sh"
    tool.write_text("#!/bin/sh\necho from-tool\n")
    tool.chmod(0o755)
    (space.root / "checks").mkdir()
    (space.root / "checks" / "expected.py").write_text("TEXT = 'from-tool'\n")
    (space.root / "checks" / "out_ok.py").write_text(
        "import os\nfrom expected import TEXT\n"
        "path = os.path.join(os.environ['CALIPER_WORKDIR'], 'out.txt')\n"
        "assert open(path).read().strip() == TEXT\n"
    )
    (space.root / ".caliper" / "results").mkdir(parents=True)
    (space.root / ".caliper" / "results" / "old.json").write_text(SECRET)
    (space.root / ".git").mkdir()
    (space.root / ".git" / "config").write_text(SECRET)
    (space.root / "outside-link").symlink_to(tmp_path)
    space.spec(SPEC)
    for name, value in space.env(BUNDLE_TOKEN=SECRET).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(space.root)
    return space


def _prepared(space: Workspace):
    options = RunOptions(spec_path=space.root / "demo.eval.yaml", k=1, model="fake", retries=0)
    return prepare_run(options, PluginHost())


def test_the_bundle_holds_the_spec_folder_and_skills_but_no_secret(space: Workspace) -> None:
    prepared = _prepared(space)
    assert SECRET in prepared.secrets.values  # the driver did resolve it
    portable = pack(prepared)
    data = portable.to_bytes()
    assert SECRET.encode() not in data
    assert portable.secret_names == ("BUNDLE_TOKEN",)
    assert PortableRun.from_bytes(data) == portable
    folder = unpack(portable, space.root.parent / "node-cache")
    shipped = sorted(
        p.relative_to(folder / "spec").as_posix()
        for p in (folder / "spec").rglob("*")
        if p.is_file()
    )
    assert shipped == [
        "bin/tool.sh",
        "checks/expected.py",
        "checks/out_ok.py",
        "demo.eval.yaml",
        "skills/helper/SKILL.md",
    ]
    assert os.access(folder / "spec" / "bin" / "tool.sh", os.X_OK)
    # the skill as resolved: the same files, so the same content hash, on the node
    assert content_hash(folder / "skills" / "0") == prepared.skills[0].content_hash


def test_a_node_rebuilds_the_run_with_its_own_secret_and_gets_the_same_outcomes(
    space: Workspace, tmp_path: Path
) -> None:
    prepared = _prepared(space)
    portable = PortableRun.from_bytes(pack(prepared).to_bytes())
    node_env = {**os.environ, "BUNDLE_TOKEN": "the-node-has-its-own-value"}
    node = rebuild(portable, PluginHost(), root=tmp_path / "node", environ=node_env)
    assert node.spec.path.is_relative_to(tmp_path / "node")
    node_value = "the-node-has-its-own-value"
    assert node.secrets.values == {node_value, f"Bearer {node_value}"}
    assert [s.content_hash for s in node.skills] == [s.content_hash for s in prepared.skills]
    assert node.spec_sha256 == prepared.spec_sha256
    # every driver pattern is kept, and the node's own copy of the spec is forbidden too
    sources = {p.pattern for p in node.forbidden}
    assert {p.pattern for p in prepared.forbidden} <= sources
    assert re.escape(str(node.spec.path)) in sources


def test_run_job_on_a_node_gives_the_outcome_a_local_attempt_gives(space: Workspace) -> None:
    from caliper.plugin.executor import AttemptJob

    portable = pack(_prepared(space))
    outcomes = {}
    for task in ("writes", "fails"):
        finished = run_job(portable, AttemptJob(task, 1, backend_id="fake"), RunController())
        assert finished.fatal is None
        assert finished.record is not None
        outcomes[task] = finished.record.outcome.value
    assert outcomes == {"writes": "pass", "fails": "task_fail"}


def test_a_variable_unset_on_the_node_is_one_setup_error_naming_it(
    space: Workspace, tmp_path: Path
) -> None:
    portable = pack(_prepared(space))
    node_env = {k: v for k, v in os.environ.items() if k != "BUNDLE_TOKEN"}
    with pytest.raises(SetupError) as raised:
        rebuild(portable, PluginHost(), root=tmp_path / "node", environ=node_env)
    assert "${BUNDLE_TOKEN} is not set in this node's environment" in raised.value.message
    assert "ray start" in (raised.value.hint or "")


def test_a_cli_missing_on_the_node_is_the_backends_setup_error(
    space: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    portable = pack(_prepared(space))
    monkeypatch.setenv("FAKE_AGENT_CLI_PATH", str(tmp_path / "no-such-agent"))
    with pytest.raises(SetupError):
        rebuild(portable, PluginHost(), root=tmp_path / "node")
    assert FAKE_AGENT.exists()  # the driver's CLI was there all along


# -- caliper.remote: what an executor plugin calls on a node, with the run's RunBundle ----------


def _bundle(space: Workspace):
    import pickle

    from caliper.runner.run.compose import bundle

    # shipped as a pickle (what ray.put does), so the node sees only the payload
    return pickle.loads(pickle.dumps(bundle(_prepared(space))))


def test_remote_checks_the_node_and_runs_a_job_from_the_bundle(space: Workspace) -> None:
    from caliper import remote
    from caliper.plugin.executor import AttemptJob

    shipped = _bundle(space)
    assert shipped.engine == "fake"
    assert SECRET.encode() not in shipped.payload()
    assert remote.check_node(shipped) is None
    outcomes = {}
    started_between: list[subprocess.Popen[bytes]] = []
    for task in ("writes", "fails"):
        finished = remote.run_job(shipped, AttemptJob(task, 1, backend_id="fake"), node="n1")
        assert finished.fatal is None and finished.node == "n1"
        assert finished.record is not None
        outcomes[task] = finished.record.outcome.value
        if not started_between:  # a child of the caller's own, started between two jobs
            started_between.append(subprocess.Popen(["sleep", "60"]))
    assert outcomes == {"writes": "pass", "fails": "task_fail"}
    sleeper = started_between[0]
    try:
        assert sleeper.poll() is None, "a job ended a process its caller started"
    finally:
        sleeper.kill()
        sleeper.wait()


def test_remote_stops_a_job_when_asked_and_hands_it_back_without_a_record(
    space: Workspace,
) -> None:
    from caliper import remote
    from caliper.plugin.executor import AttemptJob

    shipped = _bundle(space)
    asked: list[bool] = []

    def stop_requested() -> bool:
        asked.append(True)
        return True

    import time

    job = AttemptJob("sleeps", 1, backend_id="fake")
    started = time.monotonic()
    finished = remote.run_job(shipped, job, stop_requested, node="n1")
    assert time.monotonic() - started < 60
    assert finished.job == job
    assert finished.node == "n1"
    assert asked, "the attempt ended before the first poll"
    assert finished.record is None


def test_remote_says_what_a_node_lacks(
    space: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from caliper import remote

    shipped = _bundle(space)
    monkeypatch.delenv("BUNDLE_TOKEN")
    monkeypatch.setenv("CALIPER_BUNDLE_DIR", str(tmp_path / "other-node"))
    monkeypatch.setattr(remote, "_portables", {})
    monkeypatch.setattr(remote, "_prepared", {})
    problem = remote.check_node(shipped)
    assert problem is not None and "${BUNDLE_TOKEN}" in problem
    assert remote.cli_version(shipped) is None
