"""The stdio MCP echo server speaks JSON-RPC lines and logs what it received."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from caliper.testing.mcp_echo import HttpEchoServer


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


# --- Streamable HTTP -------------------------------------------------------------------------

JSON_AND_SSE = "application/json, text/event-stream"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}}}  # fmt: skip
CALL = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "over-http"}}}  # fmt: skip


def _post(
    url: str,
    body: object,
    *,
    session: str | None = None,
    accept: str = JSON_AND_SSE,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    sent = {"Content-Type": "application/json", "Accept": accept, **(headers or {})}
    if session:
        sent["Mcp-Session-Id"] = session
    request = urllib.request.Request(url, data=data, headers=sent, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def _initialize(url: str, **kwargs: object) -> str:
    status, headers, body = _post(url, INIT, **kwargs)  # type: ignore[arg-type]
    assert status == 200, body
    assert json.loads(body)["result"]["serverInfo"]["name"] == "caliper-mcp-echo"
    return headers["Mcp-Session-Id"]


def test_http_session_flow_records_headers(tmp_path: Path) -> None:
    log = tmp_path / "http.log"
    with HttpEchoServer(log=log) as server:
        auth = {"Authorization": "Bearer tok-123"}
        session = _initialize(server.url, headers=auth)
        status, _, body = _post(
            server.url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
            session=session, headers=auth,
        )  # fmt: skip
        assert (status, body) == (202, b"")
        status, headers, body = _post(server.url, CALL, session=session, headers=auth)
        assert status == 200 and headers["Content-Type"] == "application/json"
        assert json.loads(body)["result"]["content"][0]["text"] == "echo: over-http"
        # a batch gets a batch back
        batch = [{"jsonrpc": "2.0", "id": 7, "method": "tools/list"}, {**CALL, "id": 8}]
        status, _, body = _post(server.url, batch, session=session)
        assert [r["id"] for r in json.loads(body)] == [7, 8]
        assert server.headers_seen("authorization") == {"Bearer tok-123"}
        assert [m["method"] for m in server.messages()][:3] == [
            "initialize", "notifications/initialized", "tools/call",
        ]  # fmt: skip
        assert len(server.messages("tools/call")) == 2
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert logged[0]["headers"]["authorization"] == "Bearer tok-123"
    assert logged[0]["body"]["method"] == "initialize"


def test_http_sessions_are_enforced_and_get_is_405() -> None:
    with HttpEchoServer() as server:
        assert _post(server.url, CALL)[0] == 400  # no session
        assert _post(server.url, CALL, session="not-a-session")[0] == 404
        assert _post(server.url, b"{broken")[0] == 400
        assert _post(server.url.replace("/mcp", "/other"), INIT)[0] == 404
        with pytest.raises(urllib.error.HTTPError) as probe:
            urllib.request.urlopen(server.url, timeout=10)
        assert probe.value.code == 405
        assert probe.value.headers["Allow"] == "POST, DELETE"
        session = _initialize(server.url)
        delete = urllib.request.Request(
            server.url, method="DELETE", headers={"Mcp-Session-Id": session}
        )
        with urllib.request.urlopen(delete, timeout=10) as response:
            assert response.status == 200
        assert _post(server.url, CALL, session=session)[0] == 404  # ended
        assert [r.status for r in server.requests if r.verb == "GET"] == [405]


def test_http_answers_sse_when_json_is_not_accepted() -> None:
    with HttpEchoServer(require_session=False) as server:
        status, headers, body = _post(server.url, CALL, accept="text/event-stream")
        assert status == 200 and headers["Content-Type"] == "text/event-stream"
        event = body.decode()
        assert event.startswith("event: message\ndata: ") and event.endswith("\n\n")
        assert json.loads(event.split("data: ", 1)[1])["result"]["isError"] is False
    with HttpEchoServer(require_session=False, prefer_sse=True) as server:
        assert _post(server.url, CALL)[1]["Content-Type"] == "text/event-stream"


def test_http_command_line_writes_port_file_and_stops_on_sigterm(tmp_path: Path) -> None:
    port_file, log = tmp_path / "port", tmp_path / "log"
    proc = subprocess.Popen(
        [sys.executable, "-m", "caliper.testing.mcp_echo", "--http",
         "--port-file", str(port_file), "--log", str(log)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        for _ in range(200):
            if port_file.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert port_file.exists(), proc.stderr.read() if proc.stderr else ""
        url = f"http://127.0.0.1:{int(port_file.read_text())}/mcp"
        _initialize(url, headers={"Authorization": "Bearer cli-tok"})
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0, err
    assert out.strip() == url
    assert (
        json.loads(log.read_text().splitlines()[0])["headers"]["authorization"] == "Bearer cli-tok"
    )


def test_port_file_without_http_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "caliper.testing.mcp_echo", "--port-file", str(tmp_path / "p")],
        capture_output=True, text=True, timeout=30, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--port-file and --sse need --http" in done.stderr
    assert "Traceback" not in done.stderr


def test_http_required_headers_refuse_other_values() -> None:
    with HttpEchoServer(required_headers={"Authorization": "Bearer right"}) as server:
        assert _post(server.url, INIT, headers={"Authorization": "Bearer wrong"})[0] == 401
        assert _post(server.url, INIT)[0] == 401
        _initialize(server.url, headers={"Authorization": "Bearer right"})
        url = server.url
    assert server.url == url  # the address is kept after stop (for "server is down" tests)
    with pytest.raises(urllib.error.URLError):
        _post(url, INIT)
