"""The Ray executor driven through the executor contract (start, has_room, submit,
next_finished, cancel, close) on a real two-node cluster, with the fake agent CLI (a real
subprocess on each node)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from caliper.errors import SetupError, UsageError
from caliper.host.plugins import PluginHost
from caliper.plugin.executor import AttemptJob, FinishedAttempt, RunWork
from caliper.runner.run.compose import run_work
from caliper.runner.run.options import RunOptions
from caliper.runner.run.prepare import prepare_run
from caliper_executor_ray.executor import RayExecutor
from caliper_fakeagent.harness import Workspace

SPEC = """\
tasks:
  - name: writes
    prompt: |
      fake: write out.txt hello
      fake: say done
    assert: |
      import os
      assert open(os.environ['CALIPER_WORKDIR'] + '/out.txt').read().strip() == 'hello'

  - name: fails
    prompt: "fake: say nothing"
    assert: "assert False, 'nothing was written'"
  - name: sleeps
    prompt: |
      fake: sleep 600
    assert: "assert True"
"""


# the session's cluster fixtures provision the pinned claude on both nodes
pytestmark = pytest.mark.e2e


def _work(tmp_path: Path, monkeypatch, workers=2, limits=None, **options) -> RunWork:
    space = Workspace.create(tmp_path / "project")
    spec = space.spec(SPEC)
    for name, value in space.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(space.root)
    prepared = prepare_run(
        RunOptions(spec_path=spec, model="fake", retries=0, **options), PluginHost()
    )

    def not_here(job: AttemptJob) -> FinishedAttempt:
        raise AssertionError("the ray executor must not run jobs in the driver")

    return run_work({"": prepared}, not_here, workers, limits or {}, lambda: False)


def _drain(session, jobs, limit=120.0) -> list[FinishedAttempt]:
    queue, done = list(jobs), []
    deadline = time.monotonic() + limit
    while (queue or session.in_flight()) and time.monotonic() < deadline:
        while queue and session.has_room(queue[0]):
            session.submit(queue.pop(0))
        finished = session.next_finished(0.1)
        if finished is not None:
            done.append(finished)
    assert not queue and session.in_flight() == 0, "the cluster did not finish the jobs"
    return done


def test_attempts_run_on_both_nodes_with_the_local_outcomes(cluster, lab, tmp_path, monkeypatch):
    work = _work(tmp_path, monkeypatch)
    session = RayExecutor().start(work, {"address": cluster.address})
    try:
        jobs = [AttemptJob(t, n, backend_id="fake") for t in ("writes", "fails") for n in (1, 2, 3)]
        assert session.has_room(jobs[0])
        done = _drain(session, jobs)
    finally:
        session.close()
    outcomes = sorted((f.job.task_name, f.job.number, f.record.outcome.value) for f in done)
    assert outcomes == [("fails", n, "task_fail") for n in (1, 2, 3)] + [
        ("writes", n, "pass") for n in (1, 2, 3)
    ]
    # the same outcomes the driver's own pipeline gives for each task
    assert {f.node for f in done}.__len__() == 2, {f.node for f in done}
    assert all(f.fatal is None for f in done)
    for sandboxes in (lab.sandboxes(n) for n in ("a", "b")):
        assert list(sandboxes.iterdir()) == [], "an attempt sandbox was left on a node"


def test_capacity_is_workers_across_the_cluster_and_per_backend(
    cluster, lab, tmp_path, monkeypatch
):
    work = _work(tmp_path, monkeypatch, workers=3, limits={"fake": 1})
    session = RayExecutor().start(work, {"address": cluster.address})
    try:
        first = AttemptJob("writes", 1, backend_id="fake")
        session.submit(first)
        assert not session.has_room(AttemptJob("writes", 2, backend_id="fake"))
        assert session.has_room(AttemptJob("writes", 2, backend_id="other"))
        _drain(session, [])
    finally:
        session.close()


def test_a_backend_limit_holds_across_two_runs_on_the_cluster(cluster, lab, tmp_path, monkeypatch):
    """Two runs (say two CI shards) on one cluster share --max-concurrent fake=1."""
    limited = [_work(tmp_path / name, monkeypatch, limits={"fake": 1}) for name in ("one", "two")]
    one = RayExecutor().start(limited[0], {"address": cluster.address})
    two = RayExecutor().start(limited[1], {"address": cluster.address})
    try:
        job = AttemptJob("writes", 1, backend_id="fake")
        assert one.has_room(job)
        one.submit(job)
        assert not two.has_room(AttemptJob("writes", 1, backend_id="fake")), (
            "the second run took a slot the first one holds"
        )
        _drain(one, [])
        assert two.has_room(AttemptJob("writes", 1, backend_id="fake"))
        _drain(two, [AttemptJob("writes", 1, backend_id="fake")])
    finally:
        two.close()
        one.close()


def test_cancel_stops_running_attempts_and_leaves_no_agent_process(
    cluster, lab, tmp_path, monkeypatch
):
    work = _work(tmp_path, monkeypatch, timeout=900)
    session = RayExecutor().start(work, {"address": cluster.address})
    try:
        for n in (1, 2):
            session.submit(AttemptJob("sleeps", n, backend_id="fake"))
        deadline = time.monotonic() + 60
        while len(_fake_agents(lab)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(_fake_agents(lab)) >= 2, "the two attempts never started their agents"
        started = time.monotonic()
        session.cancel()
        session.cancel()  # safe twice
        done = _drain(session, [], limit=60)
    finally:
        session.close()
    assert time.monotonic() - started < 30
    assert sorted(f.job.number for f in done) == [1, 2]
    assert all(f.record is None for f in done)
    assert _fake_agents(lab) == [], "a fake agent outlived the cancelled run"
    for sandboxes in (lab.sandboxes(n) for n in ("a", "b")):
        assert list(sandboxes.iterdir()) == [], "a cancelled attempt left its sandbox"


def test_keep_workdirs_is_refused_before_connecting(tmp_path, monkeypatch):
    work = _work(tmp_path, monkeypatch, keep_workdirs=True)
    with pytest.raises(UsageError) as raised:
        RayExecutor().start(work, {"address": "127.0.0.1:1"})
    assert raised.value.exit_code == 2
    assert "--keep-workdirs" in raised.value.message


def test_no_cluster_at_the_address_is_one_setup_error(tmp_path, monkeypatch):
    from ray_cluster import free_port

    work = _work(tmp_path, monkeypatch)
    with pytest.raises(SetupError) as raised:
        RayExecutor().start(work, {"address": f"127.0.0.1:{free_port()}"})
    assert "no Ray cluster could be reached" in raised.value.message


def _fake_agents(lab) -> list[int]:
    """Live fake agents working in this lab's node sandboxes (other test runs on the machine
    start fake agents too)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        try:
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        mine = cwd.startswith(str(lab.root))
        if mine and any(part.endswith(b"fake-agent") for part in argv[:2]) and state != "Z":
            found.append(int(proc.name))
    return found
