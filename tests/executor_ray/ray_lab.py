"""The Ray executor tests' lab: the scripted model server and MCP server, the project, the
driver's environment and each node's (imported as ``ray_lab``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import yaml

from caliper.testing.harness import AgentCli, caliper_executable
from caliper.testing.mcp_echo import HttpEchoServer
from caliper.testing.model_server import ModelServer
from caliper_fakeagent.harness import FAKE_AGENT

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
        env = dict(os.environ)
        env.update(
            HOME=str(self.home),
            TMPDIR=str(self.tmp),
            CALIPER_TMPDIR=str(self.sandboxes(node)),
            CALIPER_BUNDLE_DIR=str(self.root / f"bundles-{node}"),
            ANTHROPIC_BASE_URL=self.server.url,
            ANTHROPIC_API_KEY="sk-ray-nodes",
            CLAUDE_CODE_MAX_RETRIES="0",
            RAY_E2E_SECRET=SECRET,
            FAKE_AGENT_CLI_PATH=str(FAKE_AGENT),
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
