"""Calls per MCP server and tool, counted from transcripts by the backend's MCP names."""

from __future__ import annotations

import attrs

from caliper.plugin.attempt import Turn
from caliper.report.markdown import mcp_markdown
from caliper.report.tool_usage_view import usage_lines
from caliper.results.models import AttemptRecord, Outcome, RunMeta, RunResults, TaskResult
from caliper.results.tool_usage import mcp_pattern, tool_usage


def _call(name: str, error: bool = False) -> Turn:
    return Turn("tool", tool_name=name, tool_input={}, tool_output="x", is_error=error)


def _run(*transcripts: list[Turn] | None, ablated: tuple[str, ...] = ()) -> RunResults:
    attempts = [
        AttemptRecord("t", n, Outcome.PASS, transcript=turns)
        for n, turns in enumerate(transcripts, 1)
    ]
    meta = RunMeta("r", "s", "s.eval.yaml", "2026-12-03T00:00:00Z", ablated_mcp=list(ablated))
    return RunResults(meta, [TaskResult("t", 0, len(attempts), attempts)])


def test_default_names_are_split_into_server_and_tool() -> None:
    pattern = mcp_pattern(lambda s, t: f"mcp__{s}__{t}")
    assert pattern is not None
    found = pattern.match("mcp__my_docs__search__v2")
    assert found is not None and found.group("server") == "my_docs"
    assert found.group("tool") == "search__v2"
    assert pattern.match("Bash") is None
    assert mcp_pattern(lambda s, t: f"{s}_{t}") is None  # no fixed prefix: cannot tell


def test_calls_errors_and_attempts_per_server_and_tool() -> None:
    results = _run(
        [_call("mcp__docs__search"), _call("mcp__docs__search", error=True), _call("Bash")],
        [_call("mcp__docs__fetch"), _call("mcp__git__log")],
        None,  # no transcript: not counted
        [Turn("assistant", content="hi")],
    )
    usage = tool_usage(results, mcp_pattern(lambda s, t: f"mcp__{s}__{t}"))
    assert usage.attempts_with_transcript == 3
    docs, git = usage.servers
    assert (docs.name, docs.calls, docs.errors, docs.attempts) == ("docs", 3, 1, 2)
    assert [(t.name, t.calls, t.errors, t.attempts) for t in docs.tools] == [
        ("search", 2, 1, 1),
        ("fetch", 1, 0, 1),
    ]
    assert (git.calls, git.attempts) == (1, 1)
    assert [(t.name, t.calls) for t in usage.tools] == [("Bash", 1)]
    assert (
        usage_lines(usage)[0]
        == "docs: 3 calls, 1 error in 2 attempts — search 2 (1 failed), fetch 1"
    )


def test_an_ablated_server_is_listed_with_no_calls() -> None:
    results = _run([_call("mcp__docs__search")], ablated=("git",))
    usage = tool_usage(results, mcp_pattern(lambda s, t: f"mcp__{s}__{t}"))
    git = next(s for s in usage.servers if s.name == "git")
    assert git.ablated and git.calls == 0
    assert "git: left out (--ablate mcp:git), no calls" in usage_lines(usage)
    assert attrs.asdict(usage)["servers"][1]["ablated"] is True
    table = "\n".join(mcp_markdown(results))
    assert "| git (ablated) | all tools | 0 | 0 | 0 |" in table
    assert "| docs | all tools | 1 | 0 | 1 |" in table
