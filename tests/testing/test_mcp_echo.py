"""The stdio MCP echo server speaks JSON-RPC lines and logs what it received."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def test_initialize_list_call_and_log(tmp_path: Path) -> None:
    log = tmp_path / "mcp.log"
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "echo", "arguments": {"text": "ping"}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "nope"}},
        {"jsonrpc": "2.0", "id": 5, "method": "bogus/method"},
    ]  # fmt: skip
    stdin = "".join(json.dumps(m) + "\n" for m in messages) + "not json\n"
    done = subprocess.run(
        [sys.executable, "-m", "caliper.testing.mcp_echo", "--log", str(log)],
        input=stdin, capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    replies = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert sorted(replies) == [1, 2, 3, 4, 5]  # no reply to the notification
    assert replies[1]["result"]["protocolVersion"] == "2025-11-25"
    assert [t["name"] for t in replies[2]["result"]["tools"]] == ["echo"]
    assert replies[3]["result"] == {
        "content": [{"type": "text", "text": "echo: ping"}],
        "isError": False,
    }
    assert replies[4]["result"]["isError"] is True
    assert replies[5]["error"]["code"] == -32601
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [m.get("method") for m in logged] == [m["method"] for m in messages]
