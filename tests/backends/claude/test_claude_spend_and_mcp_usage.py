"""On the real ``claude`` CLI against the scripted model: the MCP calls an attempt made are
counted per server and tool in the run's report, beside an ``--ablate mcp:NAME`` server listed
with none; what Claude Code reports as ``total_cost_usd`` is the attempt's cost."""

from __future__ import annotations

import sys

import pytest
from claude_run_support import ClaudeRunLab, lab  # noqa: F401 (fixture)

pytestmark = pytest.mark.e2e


def _echo(log) -> dict[str, object]:
    return {
        "command": sys.executable,
        "args": ["-m", "caliper.testing.mcp_echo", "--log", str(log)],
    }


def test_mcp_calls_are_counted_and_cost_is_the_clis(lab: ClaudeRunLab) -> None:  # noqa: F811
    spec = lab.spec(
        {
            "mcp": {"kept": _echo(lab.root / "kept.log"), "gone": _echo(lab.root / "gone.log")},
            "tasks": [{"name": "echoes", "prompt": "Call echo twice.", "assert": "assert True"}],
        }
    )
    call = {"name": "mcp__kept__echo", "arguments": {"text": "ping"}}
    server = lab.server(
        {"turns": [{"tool_calls": [call]}, {"tool_calls": [call]}, {"text": "done"}]}
    )
    process = lab.start(spec, server, "--ablate", "mcp:gone")
    out, err = lab.finish(process)
    assert process.returncode == 0, err
    assert " MCP calls" in out, out
    assert "kept: 2 calls, 0 errors in 1 attempt — echo 2" in out
    assert "gone: left out (--ablate mcp:gone), no calls" in out
    (results,) = lab.results()
    usage = results["tasks"][0]["attempts"][0]["usage"]
    # Claude Code prices the scripted model's tokens itself and reports total_cost_usd
    assert usage["cost_usd"] > 0
    assert f"Cost     ${usage['cost_usd']:.4g} reported by 1 of 1 attempts" in out
