"""Telling from pi's event stream whether every spec MCP server's tools reached the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from caliper_backend_pi.events import parse_output
from caliper_backend_pi.mcp_check import (
    opening_tools,
    server_names,
    servers_without_tools,
    tool_prefix,
    unusable_message,
)

FIXTURES = Path(__file__).parent / "fixtures"


def system(*tools: str) -> dict[str, Any]:
    """A pi 1.x ``message_end`` of the ``system`` message declaring ``tools``."""
    added = [{"name": name, "description": "", "parameters": {}} for name in tools]
    message = {"role": "system", "content": "", "sections": {}, "toolsAdded": added}
    return {"type": "message_end", "message": message}


def assistant(text: str = "Done.") -> dict[str, Any]:
    message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return {"type": "message_end", "message": {**message, "stopReason": "stop"}}


def stream(*events: dict[str, Any]) -> str:
    return "\n".join(json.dumps(event) for event in events) + "\n"


def test_connected_servers_have_their_tools_in_the_first_request() -> None:
    run = parse_output(
        stream(system("read", "bash", "mcp__remote__echo", "mcp__my_docs__search"), assistant())
    )
    assert servers_without_tools(run, ["remote", "my-docs"]) == []


def test_a_server_missing_from_the_first_request_is_named() -> None:
    run = parse_output(stream(system("read", "bash", "mcp__echo__echo"), assistant()))
    assert servers_without_tools(run, ["remote", "echo"]) == ["remote"]


def test_tools_added_later_do_not_count() -> None:
    """A server that connected after the model started was not there for the first request."""
    later = system("mcp__remote__echo")
    run = parse_output(stream(system("read"), assistant(), later, assistant()))
    assert servers_without_tools(run, ["remote"]) == ["remote"]


def test_a_lookalike_server_prefix_does_not_count() -> None:
    run = parse_output(stream(system("mcp__remote_2__echo"), assistant()))
    assert servers_without_tools(run, ["remote"]) == ["remote"]


def test_a_recorded_run_without_mcp_tools_names_the_server() -> None:
    text = (FIXTURES / "pi-1.6.0-ok.jsonl").read_text(encoding="utf-8")
    run = parse_output(text)
    assert opening_tools(run) == ["read", "bash", "edit", "write"]
    assert servers_without_tools(run, ["remote"]) == ["remote"]


@pytest.mark.parametrize("fixture", ["pi-0.74.2-ok.jsonl"])
def test_no_opening_system_message_says_nothing(fixture: str) -> None:
    """pi 0.7x (or output whose start was dropped) has no tool list: no judgement is made."""
    run = parse_output((FIXTURES / fixture).read_text(encoding="utf-8"))
    assert opening_tools(run) is None
    assert servers_without_tools(run, ["remote"]) == []
    assert servers_without_tools(parse_output(stream(assistant())), ["remote"]) == []


def test_long_server_names_match_pi_shortened_tool_names() -> None:
    server = "a-very-long-server-name-that-goes-on-and-on-for-a-while"
    prefix = tool_prefix(server)
    assert len(prefix) == 55 and prefix.startswith("mcp__a_very_long_server")
    shortened = prefix + "_0123abcd"
    run = parse_output(stream(system(shortened), assistant()))
    assert servers_without_tools(run, [server]) == []


def test_server_names_come_from_the_translated_block() -> None:
    assert server_names({"mcpServers": {"a": {}, "b-c": {}}, "unsupported": []}) == ["a", "b-c"]
    assert server_names(None) == [] and server_names({"mcpServers": []}) == []


def test_message_names_every_server() -> None:
    message = unusable_message(["remote", "broken"])
    assert "MCP servers 'remote', 'broken'" in message and "their tools" in message
    assert "MCP server 'remote':" in unusable_message(["remote"])
