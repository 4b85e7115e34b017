"""Reading Claude Code's report of MCP servers it could not use (the live checks are the
conformance kit's test_unusable_mcp_server_stops_the_run)."""

from __future__ import annotations

from caliper_backend_claude.mcp import unavailable_message, unavailable_servers


def test_unavailable_servers_read_from_the_init_line() -> None:
    """Only ``failed``/``needs-auth`` count; a missing or odd list is no failure."""
    init = {
        "mcp_servers": [
            {"name": "up", "status": "connected"},
            {"name": "slow", "status": "pending"},
            {"name": "down", "status": "failed"},
            {"name": "locked", "status": "needs-auth"},
            "garbage",
        ]
    }
    assert unavailable_servers(init) == [("down", "failed"), ("locked", "needs-auth")]
    assert unavailable_servers(None) == []
    assert unavailable_servers({"mcp_servers": "x"}) == []
    said = unavailable_message([("down", "failed")])
    assert "'down' (failed)" in said and "url and headers" in said
