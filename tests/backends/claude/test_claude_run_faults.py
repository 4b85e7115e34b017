"""Faults around a real ``claude`` attempt, through ``caliper run`` (issue 11): the agent
deleting its working directory (item 6), SIGTERM/SIGHUP (item 8) and processes the agent
daemonises with ``setsid`` (item 12)."""

from __future__ import annotations

import pytest
from claude_run_support import ClaudeRunLab, lab  # noqa: F401 (fixture)

from caliper.testing.harness import processes_mentioning

pytestmark = pytest.mark.e2e


def bash(command: str) -> dict:
    """A scripted model turn calling Claude Code's Bash tool."""
    return {"tool_calls": [{"name": "Bash", "arguments": {"command": command, "description": "x"}}]}


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
