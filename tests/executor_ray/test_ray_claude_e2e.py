"""``caliper run --executor ray`` end to end: the real ``caliper`` command, a real two-node Ray
cluster on 127.0.0.1 and the real ``claude`` CLI on each node, talking to a scripted model
server (issue 18).

Each node's environment is what a real node's would be: the CLI and its login (here the
model server's URL and a key), a sandbox folder, and the ``${VAR}`` value the spec's ``mcp:``
server needs. The driver (the ``caliper`` process) has its own environment.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import base_env

from caliper.testing.harness import (
    AgentCli,
    caliper_executable,
    find_agent_cli,
    processes_mentioning,
)
from caliper.testing.mcp_echo import HttpEchoServer
from caliper.testing.model_server import ModelServer

pytestmark = pytest.mark.e2e

MODEL = "claude-sonnet-4-5"
SECRET = "ray-node-secret-9d1f7c"
ATTEMPT_LINE = "caliper-executor-ray: attempt"
WAITER = "import time; time.sleep(4177)"
"""A tool process that waits (Claude Code refuses a plain long ``sleep``)."""


def bash(command: str) -> dict[str, Any]:
    """A scripted model turn calling Claude Code's Bash tool."""
    return {"tool_calls": [{"name": "Bash", "arguments": {"command": command, "description": "x"}}]}


SCRIPT = {
    "rules": [
        {
            "when": {"user_text_contains": "answer file"},
            "turns": [bash("echo 42 > answer.txt"), {"text": "Wrote it."}],
        },
        {
            "when": {"user_text_contains": "wait for me"},
            "turns": [bash(f"python3 -c '{WAITER}'"), {"text": "Waited."}],
        },
    ],
    "fallback_text": "I will not do that.",
}


class Lab:
    """The project, the driver's environment, the nodes' folders and the servers."""

    def __init__(self, root: Path, cli: AgentCli, server: ModelServer, echo: HttpEchoServer):
        self.root = root
        self.cli = cli
        self.server = server
        self.echo = echo
        self.project = root / "project"
        self.home = root / "real-home"
        self.tmp = root / "tmp"
        for folder in (self.project, self.home, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)

    def sandboxes(self, node: str) -> Path:
        folder = self.root / f"sandboxes-{node}"
        folder.mkdir(exist_ok=True)
        return folder

    def node_env(self, node: str, *, with_cli: bool = True) -> dict[str, str]:
        """What node ``node``'s workers see: the CLI and its login, the secret, a sandbox
        folder and a bundle folder of their own."""
        env = base_env(
            HOME=str(self.home),
            TMPDIR=str(self.tmp),
            CALIPER_TMPDIR=str(self.sandboxes(node)),
            CALIPER_BUNDLE_DIR=str(self.root / f"bundles-{node}"),
            ANTHROPIC_BASE_URL=self.server.url,
            ANTHROPIC_API_KEY="sk-ray-nodes",
            CLAUDE_CODE_MAX_RETRIES="0",
            RAY_E2E_SECRET=SECRET,
        )
        if with_cli:
            env["CLAUDE_CLI_PATH"] = str(self.cli.path)
            env["PATH"] = self.cli.path_env(os.environ.get("PATH", os.defpath))
        else:
            env["CLAUDE_CLI_PATH"] = str(self.root / "claude-is-not-installed-here")
        return env

    def driver_env(self) -> dict[str, str]:
        """The ``caliper`` process's environment: the local run needs the CLI and login too."""
        env = self.node_env("local")
        env["CALIPER_BUNDLE_DIR"] = str(self.root / "bundles-driver")
        return env

    def spec(self, tasks: list[dict[str, Any]], name: str = "ray", mcp: bool = False) -> Path:
        data: dict[str, Any] = {"tasks": tasks}
        if mcp:
            data["mcp"] = {
                "echo": {
                    "type": "http",
                    "url": self.echo.url,
                    "headers": {"Authorization": "Bearer ${RAY_E2E_SECRET}"},
                }
            }
        path = self.project / f"{name}.eval.yaml"
        path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        return path

    def start(self, spec: Path, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(caliper_executable()), "run", str(spec), "--model", f"claude-code:{MODEL}",
             "--retries", "0", *args],
            cwd=self.project,
            env=self.driver_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip

    def run(self, spec: Path, *args: str, timeout: float = 240) -> tuple[int, str, str]:
        process = self.start(spec, *args)
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            _out, err = process.communicate()
            raise AssertionError(f"caliper did not finish in {timeout}s\n{err}") from None
        return process.returncode, out, err

    def latest(self, spec_name: str = "ray") -> dict[str, Any]:
        import json

        found = sorted(
            (self.project / ".caliper" / "results" / spec_name).glob("*.json"),
            key=lambda p: p.stat().st_mtime,
        )
        assert found, "no run was saved"
        return json.loads(found[-1].read_text(encoding="utf-8"))


def files_containing(text: str, *roots: Path) -> list[str]:
    """Files under ``roots`` whose bytes contain ``text``."""
    needle = text.encode()
    hits = []
    for root in roots:
        for path in root.rglob("*"):
            try:
                if path.is_file() and not path.is_symlink() and needle in path.read_bytes():
                    hits.append(str(path))
            except OSError:
                continue
    return hits


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory):
    """The lab with its model server and MCP server (skips without the pinned claude)."""
    root = tmp_path_factory.mktemp("ray-e2e")
    cli = find_agent_cli("claude", root / "bin")
    if isinstance(cli, str):
        pytest.skip(cli)
    server = ModelServer(SCRIPT).start()
    with HttpEchoServer() as echo:
        yield Lab(root, cli, server, echo)
    server.stop()


@pytest.fixture(scope="module")
def cluster(lab: Lab, ray_cluster_factory):
    """Two nodes, each with claude, its login and the secret."""
    return ray_cluster_factory(lab.node_env("a"), lab.node_env("b"))


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
    # each node's own Ray logs show attempts it ran
    per_node = {}
    for node in ("a", "b"):
        lines = [
            line
            for path in cluster.logs(node)
            for line in path.read_text(errors="replace").splitlines()
            if ATTEMPT_LINE in line and "starts on" in line
        ]
        per_node[node] = len(lines)
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
    """What the executor puts with ray.put is PortableRun.to_bytes() of the prepared run."""
    from caliper.plugins import PluginHost
    from caliper.runner.options import RunOptions
    from caliper.runner.portable import pack
    from caliper.runner.prepare import prepare_run

    spec = lab.spec([{"name": "t", "prompt": "Write the answer file.", "assert": "assert True"}],
                    name="bundle", mcp=True)  # fmt: skip
    for name, value in lab.driver_env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(lab.project)
    prepared = prepare_run(RunOptions(spec_path=spec, model=f"claude-code:{MODEL}"), PluginHost())
    assert f"Bearer {SECRET}" in prepared.secrets.values
    data = pack(prepared).to_bytes()
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
    while time.monotonic() < deadline and len(_sleepers()) < 2 and process.poll() is None:
        time.sleep(0.3)
    running = len(_sleepers())
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        _out, err = process.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    requests = [(r.answered_by, r.outcome, r.tool_calls) for r in lab.server.requests[before:]]
    assert running == 2, f"the agents never started their tools\n{err}\n{requests}"
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


def _sleepers() -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if WAITER.encode() in argv and state != "Z":
            found.append(int(proc.name))
    return found


def _claudes(lab: Lab) -> list[str]:
    return processes_mentioning(str(lab.cli.path))
