"""Reading from Hermes' ``agent.log`` which spec MCP servers connected (no Hermes needed).

The log lines are the shapes Hermes 0.19's MCP client writes (``tools/mcp_tool.py``).
"""

from __future__ import annotations

from pathlib import Path

from caliper.plugin.attempt import AgentStatus
from caliper_backend_hermes.backend import mcp_failure
from caliper_backend_hermes.mcp_check import (
    UnusableServer,
    read_agent_log,
    unusable_message,
    unusable_servers,
)

STAMP = "2026-11-30 19:26:04,900"
REGISTERED_HTTP = (
    f"{STAMP} INFO tools.mcp_tool: MCP server 'remote' (HTTP): registered 1 tool(s): "
    "mcp_remote_echo"
)
REGISTERED_STDIO = f"{STAMP} INFO tools.mcp_tool: MCP server 'echo' (stdio): registered 0 tool(s): "
RETRY = (
    f"{STAMP} WARNING tools.mcp_tool: MCP server 'remote' initial connection failed "
    "(attempt 1/3), retrying in 1s: unhandled errors in a TaskGroup (1 sub-exception)"
)
FAILED_HTTP = (
    f"{STAMP} WARNING tools.mcp_tool: Failed to connect to MCP server 'remote': Client error "
    "'401 Unauthorized' for url 'http://127.0.0.1:4555/mcp'"
)
FAILED_STDIO = (
    f"{STAMP} WARNING tools.mcp_tool: Failed to connect to MCP server 'broken' "
    "(command=/usr/bin/python3): Connection closed"
)
SKIPPED = (
    f"{STAMP} WARNING tools.mcp_tool: Skipping suspicious MCP server 'odd': env forwards "
    "a credential"
)
OTHER = f"{STAMP} WARNING tools.registry: check_fn check_web_api_key returned False"


def test_connected_servers_are_usable() -> None:
    log = "\n".join([OTHER, RETRY, REGISTERED_HTTP, REGISTERED_STDIO])
    assert unusable_servers(log, ["remote", "echo"]) == []


def test_a_failed_server_is_named_with_hermes_reason() -> None:
    log = "\n".join([RETRY, FAILED_HTTP, REGISTERED_STDIO, FAILED_STDIO])
    assert unusable_servers(log, ["remote", "echo", "broken"]) == [
        UnusableServer(
            "remote", "Client error '401 Unauthorized' for url 'http://127.0.0.1:4555/mcp'"
        ),
        UnusableServer("broken", "Connection closed"),
    ]


def test_a_suspicious_server_skipped_by_hermes_is_unusable() -> None:
    assert unusable_servers(SKIPPED, ["odd"]) == [
        UnusableServer("odd", "env forwards a credential")
    ]


def test_a_server_still_retrying_is_unusable_with_its_last_error() -> None:
    assert unusable_servers(f"{OTHER}\n{RETRY}", ["remote"]) == [
        UnusableServer("remote", "unhandled errors in a TaskGroup (1 sub-exception)")
    ]


def test_a_server_never_mentioned_is_unusable_without_a_reason() -> None:
    """No "registered" line means no tools, even when Hermes logged nothing about it."""
    assert unusable_servers("", ["remote"]) == [UnusableServer("remote", None)]
    message = unusable_message([UnusableServer("remote", None)])
    assert "'remote'" in message and "never reported connecting" in message


def test_other_servers_lines_do_not_count() -> None:
    """A server is matched by its whole name, not a prefix or a lookalike."""
    log = REGISTERED_HTTP.replace("'remote'", "'remote-2'")
    assert unusable_servers(log, ["remote"]) == [UnusableServer("remote", None)]


def test_message_names_every_server() -> None:
    message = unusable_message(
        [UnusableServer("a", "Connection closed"), UnusableServer("b", None)]
    )
    assert "MCP servers 'a' (Connection closed), 'b' (" in message


def test_mcp_failure_reads_the_attempt_log_and_masks_secrets(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "agent.log").write_text(f"{FAILED_HTTP}\n{REGISTERED_STDIO}\n", encoding="utf-8")
    servers = {"remote": {"url": "${CALIPER_MCP_SECRET_0}"}, "echo": {"command": "x"}}
    failure = mcp_failure(tmp_path, servers, secrets=["http://127.0.0.1:4555/mcp", ""])
    assert failure is not None and failure.status is AgentStatus.SETUP_ERROR
    assert "'remote'" in failure.error and "'echo'" not in failure.error
    assert "401 Unauthorized" in failure.error
    assert "127.0.0.1:4555" not in failure.error and "***" in failure.error


def test_mcp_failure_is_none_when_all_connected(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "agent.log").write_text(REGISTERED_HTTP + "\n", encoding="utf-8")
    assert mcp_failure(tmp_path, {"remote": {}}) is None


def test_missing_log_reads_as_empty(tmp_path: Path) -> None:
    assert read_agent_log(tmp_path) == ""
    assert mcp_failure(tmp_path, {"remote": {}}) is not None
