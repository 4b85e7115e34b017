"""``caliper run --model claude-code`` as a real subprocess, started or run to the end, with the
real ``claude`` talking to a scripted model server (imported as ``claude_run_support``).

Used by the fault tests that must reach the caliper process itself (signals, leftovers), which
the conformance kit's run-to-completion helper cannot do.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from caliper.testing.harness import AgentCli, caliper_executable, find_agent_cli
from caliper.testing.model_server import ModelServer

MODEL = "claude-sonnet-4-5"


class ClaudeRunLab:
    """A project folder, a fake real home, a temp root and the pinned ``claude``."""

    def __init__(self, root: Path, cli: AgentCli):
        self.root = root
        self.cli = cli
        self.project = root / "project"
        self.home = root / "real-home"
        self.sandboxes = root / "sandboxes"
        self.tmp = root / "tmp"
        for folder in (self.project / ".caliper", self.home, self.sandboxes, self.tmp):
            folder.mkdir(parents=True, exist_ok=True)
        self.servers: list[ModelServer] = []

    def server(self, script: Mapping[str, Any]) -> ModelServer:
        """Start a scripted model server (stopped by :meth:`close`)."""
        server = ModelServer(dict(script)).start()
        self.servers.append(server)
        return server

    def spec(self, data: Mapping[str, Any], name: str = "faults") -> Path:
        path = self.project / f"{name}.eval.yaml"
        path.write_text(yaml.safe_dump(dict(data), sort_keys=False), encoding="utf-8")
        return path

    def env(self, server: ModelServer, **extra: str) -> dict[str, str]:
        """The caliper process's whole environment: its TMPDIR and CALIPER_TMPDIR are ours."""
        env = {
            "PATH": self.cli.path_env(os.environ.get("PATH", os.defpath)),
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "TMPDIR": str(self.tmp),
            "CALIPER_TMPDIR": str(self.sandboxes),
            "CLAUDE_CLI_PATH": str(self.cli.path),
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "sk-faults",
            "CLAUDE_CODE_MAX_RETRIES": "0",
        }
        if "CALIPER_OFFLINE" in os.environ:
            env["CALIPER_OFFLINE"] = os.environ["CALIPER_OFFLINE"]
        env.update(extra)
        return env

    def start(
        self, spec: Path, server: ModelServer, *args: str, env: Mapping[str, str] | None = None
    ) -> subprocess.Popen[str]:
        """Start ``caliper run SPEC --model claude-code:MODEL --k 1 ARGS`` without waiting."""
        return subprocess.Popen(
            [
                str(caliper_executable()),
                "run",
                str(spec),
                "--model",
                f"claude-code:{MODEL}",
                "--k",
                "1",
                *args,
            ],
            cwd=self.project,
            env={**self.env(server), **(env or {})},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def finish(self, process: subprocess.Popen[str], timeout: float = 120) -> tuple[str, str]:
        """Wait for a started run; its (stdout, stderr)."""
        try:
            return process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            _out, err = process.communicate()
            raise AssertionError(f"caliper did not finish in {timeout}s\n{err}") from None

    def results(self) -> list[dict[str, Any]]:
        """Every saved run of the project, oldest first."""
        found = sorted(
            (self.project / ".caliper" / "results").glob("*/*.json"),
            key=lambda p: p.stat().st_mtime,
        )
        return [json.loads(p.read_text(encoding="utf-8")) for p in found]

    def files_containing(self, text: str, *roots: Path) -> list[str]:
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

    def close(self) -> None:
        for server in self.servers:
            server.stop()


def wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    """Poll ``condition`` until it holds or ``seconds`` pass; its last value."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.fixture
def lab(tmp_path: Path) -> Any:
    """A :class:`ClaudeRunLab` (skips outside a loopback-only namespace or without claude)."""
    cli = find_agent_cli("claude", tmp_path / "bin")
    if isinstance(cli, str):
        pytest.skip(cli)
    opened = ClaudeRunLab(tmp_path, cli)
    yield opened
    opened.close()
