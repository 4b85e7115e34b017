"""``--ablate mcp:NAME`` on the real ``claude`` CLI: the ablated server is never started and its
tools are absent from what the model is offered, while the other declared server's are there."""

from __future__ import annotations

import sys

import pytest
from claude_run_support import ClaudeRunLab, lab  # noqa: F401 (fixture)

pytestmark = pytest.mark.e2e


def _echo(log) -> dict[str, object]:
    args = ["-m", "caliper.testing.mcp_echo", "--log", str(log)]
    return {"command": sys.executable, "args": args}


def test_an_ablated_server_is_not_offered_to_the_model(lab: ClaudeRunLab) -> None:  # noqa: F811
    kept_log, ablated_log = lab.root / "kept.log", lab.root / "ablated.log"
    spec = lab.spec(
        {
            "mcp": {"kept": _echo(kept_log), "ablated": _echo(ablated_log)},
            "tasks": [{"name": "answers", "prompt": "Say ok.", "assert": "assert True"}],
        }
    )
    server = lab.server({"turns": [{"text": "ok"}]})
    process = lab.start(spec, server, "--ablate", "mcp:ablated")
    _out, err = lab.finish(process)
    assert process.returncode == 0, err
    (results,) = lab.results()
    assert results["meta"]["ablated_mcp"] == ["ablated"]
    # Claude Code offers MCP tools as deferred tools, named in the request's text
    sent = "\n".join(r.sent_text() for r in server.model_requests())
    assert "mcp__kept__echo" in sent, sent[-2000:]
    assert "mcp__ablated" not in sent
    assert not ablated_log.exists()  # never even started
