"""``caliper run --executor ray`` end to end: the real ``caliper`` command, a real two-node Ray
cluster on 127.0.0.1 and the real ``claude`` CLI on each node, talking to a scripted model
server (issue 18).

Each node's environment is what a real node's would be: the CLI and its login (here the
model server's URL and a key), a sandbox folder, and the ``${VAR}`` value the spec's ``mcp:``
server needs. The driver (the ``caliper`` process) has its own environment.
"""

from __future__ import annotations

import pickle
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from ray_cluster import RayCluster
from ray_lab import ATTEMPT_LINE, MODEL, SECRET, WAITER, Lab, files_containing

from caliper.testing.harness import processes_mentioning

pytestmark = pytest.mark.e2e


def outcomes(run: dict[str, Any]) -> dict[str, list[str]]:
    return {t["name"]: sorted(a["outcome"] for a in t["attempts"]) for t in run["tasks"]}


def test_attempts_run_on_both_nodes_and_match_a_local_runs_outcomes(lab: Lab, cluster) -> None:
    spec = lab.spec(
        [
            {
                "name": "writes",
                "prompt": "Write the answer file.",
                "assert": "import os\n"
                "assert open(os.path.join(os.environ['CALIPER_WORKDIR'], 'answer.txt'))"
                ".read().strip() == '42'",
            },
            {"name": "refuses", "prompt": "Do nothing at all.", "assert": "assert False"},
        ],
        mcp=True,
    )
    # the cluster is shared by the session's Ray tests: count only what this run adds
    started_before = _attempts_started(cluster)
    code, out, err = lab.run(
        spec, "--k", "2", "--workers", "2", "--executor", "ray", "--ray-address", cluster.address
    )
    assert code == 0, err
    assert "Traceback" not in err
    remote = lab.latest()
    # the nodes resolved ${RAY_E2E_SECRET} themselves: claude sent it to the MCP server
    assert f"Bearer {SECRET}" in lab.echo.headers_seen("authorization")
    code, _out, local_err = lab.run(spec, "--k", "2", "--workers", "2", "--executor", "local")
    local = lab.latest()
    assert code == 0, local_err
    assert outcomes(local) == {"writes": ["pass", "pass"], "refuses": ["task_fail", "task_fail"]}
    assert outcomes(remote) == outcomes(local)
    assert remote["meta"]["partial"] is False
    # each node's own Ray logs show attempts it ran (read after the local run: time to flush)
    started = _attempts_started(cluster)
    per_node = {node: started[node] - started_before[node] for node in started}
    assert per_node["a"] >= 1 and per_node["b"] >= 1, per_node
    assert sum(per_node.values()) == 4, per_node
    # the secret is nowhere else: results, output, Ray's logs and object store spill on
    # either node, the bundles unpacked there, the sandboxes
    assert SECRET not in out + err
    assert files_containing(SECRET, lab.project) == []
    assert files_containing(SECRET, cluster.root) == []
    for node in ("a", "b"):
        assert files_containing(SECRET, lab.root / f"bundles-{node}") == []
        assert list(lab.sandboxes(node).iterdir()) == [], "an attempt sandbox was left"


def test_the_bundle_in_the_object_store_holds_no_secret(lab: Lab, monkeypatch) -> None:
    """What the executor puts with ray.put is the run's RunBundle, pickled as its payload."""
    from caliper.host.plugins import PluginHost
    from caliper.runner.run.compose import bundle
    from caliper.runner.run.options import RunOptions
    from caliper.runner.run.prepare import prepare_run

    spec = lab.spec([{"name": "t", "prompt": "Write the answer file.", "assert": "assert True"}],
                    name="bundle", mcp=True)  # fmt: skip
    for name, value in lab.driver_env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(lab.project)
    prepared = prepare_run(RunOptions(spec_path=spec, model=f"claude-code:{MODEL}"), PluginHost())
    assert f"Bearer {SECRET}" in prepared.secrets.values
    data = pickle.dumps(bundle(prepared))
    assert SECRET.encode() not in data
    assert b"RAY_E2E_SECRET" in data  # the name travels, so the node can resolve it


def test_a_node_without_the_cli_stops_the_run_with_one_message_naming_it(
    lab: Lab, ray_cluster_factory
) -> None:
    broken = ray_cluster_factory(lab.node_env("a"), lab.node_env("b", with_cli=False))
    spec = lab.spec([{"name": "t", "prompt": "Write the answer file.", "assert": "assert True"}],
                    name="missing")  # fmt: skip
    code, _out, err = lab.run(
        spec, "--k", "3", "--executor", "ray", "--ray-address", broken.address, timeout=180
    )
    assert code == 3, err
    assert "Traceback" not in err
    assert "1 of 2 node(s) cannot run" in err, err
    named = [line for line in err.splitlines() if line.startswith("node ")]
    assert len(named) == 1, err
    assert "claude" in named[0].lower() and "install" in err.lower(), err
    started = [
        line
        for node in ("a", "b")
        for path in broken.logs(node)
        for line in path.read_text(errors="replace").splitlines()
        if ATTEMPT_LINE in line
    ]
    assert started == [], "attempts ran although a node cannot run them"


def test_ctrl_c_stops_the_attempts_on_the_nodes_and_leaves_nothing_running(
    lab: Lab, cluster
) -> None:
    spec = lab.spec(
        [{"name": "waits", "prompt": "Please wait for me.", "assert": "assert True"}],
        name="stopped",
    )
    before = len(lab.server.requests)
    process = lab.start(
        spec, "--k", "2", "--workers", "2", "--timeout", "300",
        "--executor", "ray", "--ray-address", cluster.address,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    running = 0  # the most tool processes seen at once (a count taken twice can differ)
    while time.monotonic() < deadline and running < 2 and process.poll() is None:
        running = max(running, len(_sleepers()))
        time.sleep(0.3)
    seen = processes_mentioning(WAITER)  # for the message, should the count be wrong
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        _out, err = process.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    requests = [(r.answered_by, r.outcome, r.tool_calls) for r in lab.server.requests[before:]]
    assert running == 2, f"the agents never started their tools\n{err}\n{requests}\n{seen}"
    assert time.monotonic() - sent < 60, "stopping took too long"
    assert process.returncode == 130, err
    assert "Traceback" not in err
    run = lab.latest("stopped")
    assert run["meta"]["partial"] is True
    assert run["tasks"][0]["attempts"] == []
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (_sleepers() or _claudes(lab)):
        time.sleep(0.2)
    assert _sleepers() == [], "a tool process claude started outlived the stop"
    assert _claudes(lab) == [], "a claude process outlived the stop"
    for node in ("a", "b"):
        assert list(lab.sandboxes(node).iterdir()) == [], "a stopped attempt left its sandbox"
    cancelled = Counter(
        node
        for node in ("a", "b")
        for path in cluster.logs(node)
        for line in path.read_text(errors="replace").splitlines()
        if ATTEMPT_LINE in line and "'waits'" in line and "cancelled" in line
    )
    assert sum(cancelled.values()) == 2, cancelled


def _attempts_started(cluster: RayCluster) -> dict[str, int]:
    """How many attempt starts each node's Ray logs hold so far."""
    return {
        node: sum(
            1
            for path in cluster.logs(node)
            for line in path.read_text(errors="replace").splitlines()
            if ATTEMPT_LINE in line and "starts on" in line
        )
        for node in ("a", "b")
    }


def _sleepers() -> list[int]:
    """The tool processes the agents started: Python interpreters running :data:`WAITER`.

    Only an interpreter counts: a ``python3`` that is a shell-script shim (pyenv's) runs as
    ``bash SHIM -c WAITER`` before it execs Python, and the subshells it forks meanwhile show
    the same command line, so counting every process with that argument counted one tool
    call twice (CI once saw 3 for 2 calls)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        interpreter = Path(argv[0].decode(errors="replace")).name.startswith("python")
        if interpreter and WAITER.encode() in argv and state != "Z":
            found.append(int(proc.name))
    return found


def _claudes(lab: Lab) -> list[str]:
    return processes_mentioning(str(lab.cli.path))
