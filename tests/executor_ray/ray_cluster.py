"""A real two-node Ray cluster on this machine for the Ray executor's tests.

Each node is a ``ray start --block`` process in its own session with its own temp folder
(its logs are there) and its own environment (what the node's workers see: the agent CLI,
its login, ``${VAR}`` values). :meth:`RayCluster.stop` ends each node's ``ray start`` and then
its whole process group by id — never ``ray stop``, which would end every Ray process of the
machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

RAY = Path(sys.executable).with_name("ray")
START_SECONDS = 120.0


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def quiet_env(base: Mapping[str, str]) -> dict[str, str]:
    """``base`` plus the settings that keep Ray local, quiet and upload-free."""
    env = dict(base)
    env.update(
        RAY_USAGE_STATS_ENABLED="0",
        RAY_ENABLE_UV_RUN_RUNTIME_ENV="0",
        RAY_BACKEND_LOG_LEVEL="error",
        PYTHONUNBUFFERED="1",
    )
    return env


class RayCluster:
    """Nodes named ``a`` (the head) and ``b``, each with one CPU and a resource of its name."""

    def __init__(self, root: Path):
        self.root = root
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.nodes: dict[str, subprocess.Popen[bytes]] = {}

    def temp_dir(self, name: str) -> Path:
        """The node's Ray temp folder (its ``session_latest/logs`` hold the worker logs)."""
        return self.root / f"ray-{name}"

    def logs(self, name: str) -> list[Path]:
        """Every log file node ``name`` wrote."""
        return [p for p in self.temp_dir(name).rglob("*") if p.is_file() and "logs" in p.parts]

    def _start(self, name: str, env: Mapping[str, str], head: bool) -> None:
        temp = self.temp_dir(name)
        temp.mkdir(parents=True, exist_ok=True)
        args = [
            str(RAY), "start", "--block",
            "--node-ip-address", "127.0.0.1",
            "--num-cpus", "1",
            "--resources", json.dumps({f"node_{name}": 1}),
            "--object-store-memory", str(100 * 1024 * 1024),
            "--temp-dir", str(temp),
            "--dashboard-agent-listen-port", str(free_port()),
            "--dashboard-agent-grpc-port", str(free_port()),
            "--runtime-env-agent-port", str(free_port()),
            "--metrics-export-port", str(free_port()),
            "--disable-usage-stats",
        ]  # fmt: skip
        if head:
            args += [
                "--head",
                "--port", str(self.port),
                "--ray-client-server-port", str(free_port()),
                "--include-dashboard=false",
                "--dashboard-port", str(free_port()),
            ]  # fmt: skip
        else:
            args += ["--address", self.address]
        log = open(self.root / f"ray-start-{name}.log", "wb")  # noqa: SIM115 (kept open by the node)
        self.nodes[name] = subprocess.Popen(
            args,
            env=quiet_env(env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def start(self, env_a: Mapping[str, str], env_b: Mapping[str, str]) -> RayCluster:
        """Start both nodes and wait until the cluster sees two alive nodes."""
        self._start("a", env_a, head=True)
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline and self.alive_nodes() < 1:
            self._check_running()
            time.sleep(0.2)
        self._start("b", env_b, head=False)
        while time.monotonic() < deadline:
            if self.alive_nodes() >= 2:
                return self
            self._check_running()
            time.sleep(0.5)
        raise AssertionError(f"the two-node Ray cluster did not come up in {START_SECONDS:g} s")

    def _check_running(self) -> None:
        for name, node in self.nodes.items():
            if node.poll() is not None:
                log = (self.root / f"ray-start-{name}.log").read_text(errors="replace")
                raise AssertionError(f"ray start for node {name} exited:\n{log[-3000:]}")

    def alive_nodes(self) -> int:
        """How many nodes finished starting (``ray start`` says so once its node joined)."""
        started = 0
        for name in self.nodes:
            with contextlib.suppress(OSError):
                log = (self.root / f"ray-start-{name}.log").read_text(errors="replace")
                started += "Ray runtime started" in log
        return started

    def stop(self) -> None:
        """End both nodes: SIGTERM to each ``ray start`` (it stops its node), then SIGKILL to
        whatever is left of its session (Ray workers run in process groups of their own, but
        in the session of the ``ray start`` that started their node)."""
        for node in self.nodes.values():
            with contextlib.suppress(ProcessLookupError):
                node.send_signal(signal.SIGTERM)
        for node in self.nodes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.wait(timeout=10)
        for pid in self.processes():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for node in self.nodes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                node.wait(timeout=10)
        deadline = time.monotonic() + 10
        while self.processes() and time.monotonic() < deadline:
            time.sleep(0.1)

    def processes(self) -> list[int]:
        """Live processes of the cluster's nodes: those in the sessions of its ``ray start``s."""
        sessions = {node.pid for node in self.nodes.values()}
        found = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError):
                fields = (proc / "stat").read_text().rsplit(")", 1)[-1].split()
                if fields[0] != "Z" and int(fields[3]) in sessions:
                    found.append(int(proc.name))
        return found
