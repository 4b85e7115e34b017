"""Faults around a real ``claude`` attempt, through ``caliper run`` (issue 11): the agent
deleting its working directory (item 6), SIGTERM/SIGHUP (item 8) and processes the agent
daemonises with ``setsid`` (item 12)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest
from claude_run_support import ClaudeRunLab, lab, wait_for  # noqa: F401 (fixture)

from caliper.testing.harness import processes_mentioning

pytestmark = pytest.mark.e2e


def bash(command: str) -> dict:
    """A scripted model turn calling Claude Code's Bash tool."""
    return {"tool_calls": [{"name": "Bash", "arguments": {"command": command, "description": "x"}}]}


def sleepers(seconds: str) -> list[int]:
    """Live ``sleep SECONDS`` processes (the duration is used by nothing else)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            state = (proc / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if argv[:2] == [b"sleep", seconds.encode()] and state != "Z":
            found.append(int(proc.name))
    return found


def test_agent_deleting_its_workdir_is_a_task_failure(lab: ClaudeRunLab) -> None:  # noqa: F811
    server = lab.server({"turns": [bash('rm -rf "$PWD"'), {"text": "Cleaned up."}]})
    marker = lab.root / "cleanup-ran"
    spec = lab.spec(
        {
            "tasks": [
                {
                    "name": "self destruct",
                    "prompt": "Clean the folder.",
                    "assert": "assert True",
                    "cleanup": f"touch {marker}",
                }
            ]
        }
    )
    _out, err = lab.finish(lab.start(spec, server))
    (run,) = lab.results()
    (attempt,) = run["tasks"][0]["attempts"]
    assert attempt["outcome"] == "task_fail", (attempt, err)
    assert "removed its own working directory" in attempt["reason"]
    assert [t["tool_name"] for t in attempt["transcript"] if t["role"] == "tool"] == ["Bash"]
    assert marker.exists(), "cleanup did not run"
    assert processes_mentioning(str(lab.sandboxes)) == []
    assert list(lab.sandboxes.iterdir()) == []


SECRET = "s3cr3t-FAULT-7781"


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_stop_signal_ends_claude_cleans_up_and_saves_a_partial_run(
    lab: ClaudeRunLab,  # noqa: F811
    signum: int,
    code: int,
) -> None:
    # a quick tool call (recorded at once), then a reply that takes a minute: the signal
    # arrives while claude waits for it, its MCP server running
    server = lab.server({"turns": [bash("true"), {"text": "Too late.", "delay": 60}]})
    spec = lab.spec(
        {
            "mcp": {
                "echo": {
                    "command": sys.executable,
                    "args": ["-m", "caliper.testing.mcp_echo"],
                    "env": {"ECHO_TOKEN": "${FAULT_SECRET}"},
                }
            },
            "tasks": [{"name": "slow", "prompt": "Take your time.", "assert": "assert True"}],
        }
    )
    process = lab.start(spec, server, "--timeout", "90", env={"FAULT_SECRET": SECRET})
    try:
        started = wait_for(lambda: any(r.tool_calls for r in server.requests), 60)
        time.sleep(1.5)  # claude runs the tool and sends the next (slow) request
        config = list(lab.sandboxes.glob("*/private/claude-mcp.json"))
        assert started and config, "claude never reached the model server"
        assert SECRET in config[0].read_text()  # the file this test is about did exist
        assert processes_mentioning(str(lab.sandboxes)), "claude is not running"
    finally:
        sent = time.monotonic()
        process.send_signal(signum)
        _out, err = lab.finish(process, timeout=60)
    assert time.monotonic() - sent < 20, "stopping took too long"
    assert process.returncode == code, err
    assert "Traceback" not in err
    assert signal.Signals(signum).name in err
    (run,) = lab.results()
    assert run["meta"]["partial"] is True
    assert signal.Signals(signum).name in run["meta"]["stop_reason"]
    assert run["tasks"][0]["attempts"] == []
    assert wait_for(lambda: processes_mentioning(str(lab.sandboxes)) == [], 5), (
        processes_mentioning(str(lab.sandboxes))
    )
    assert processes_mentioning(str(lab.cli.path)) == [], "a claude process survived"
    assert list(lab.sandboxes.iterdir()) == [], "an attempt temp dir was left behind"
    assert lab.files_containing(SECRET, lab.root) == []


def test_setsid_daemon_started_by_claude_is_ended(lab: ClaudeRunLab) -> None:  # noqa: F811
    server = lab.server(
        {"turns": [bash("setsid sleep 3121 >/dev/null 2>&1 &"), {"text": "Started it."}]}
    )
    spec = lab.spec({"tasks": [{"name": "daemon", "prompt": "Start it.", "assert": "assert True"}]})
    try:
        _out, err = lab.finish(lab.start(spec, server))
        (run,) = lab.results()
        (attempt,) = run["tasks"][0]["attempts"]
        assert attempt["outcome"] == "pass", (attempt, err)
        tools = [t for t in attempt["transcript"] if t["role"] == "tool"]
        assert [t["tool_name"] for t in tools] == ["Bash"], tools
        time.sleep(0.3)
        assert sleepers("3121") == [], "the daemon claude started outlived the attempt"
    finally:
        for pid in sleepers("3121"):
            os.kill(pid, signal.SIGKILL)
