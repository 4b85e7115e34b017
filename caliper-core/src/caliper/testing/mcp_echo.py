"""A tiny MCP server for tests: one tool, ``echo``, answering ``echo: <text>``.

Standard library only, two transports:

* stdio (default): JSON-RPC 2.0, one message per line on stdin/stdout. Every message it
  receives is appended as a JSON line to ``--log`` (or ``$MCP_ECHO_LOG``).
* Streamable HTTP (``--http``): :class:`HttpEchoServer` on 127.0.0.1 (port 0 by default).
  POST carries JSON-RPC and is answered as ``application/json`` (or as one SSE event when the
  client does not accept JSON); ``initialize`` opens a session (``Mcp-Session-Id``); GET on
  the endpoint is 405. Every request is recorded *with its headers* (in memory and as a JSON
  line in ``--log``), so a test can check that a resolved ``Authorization`` header arrived.

    python -m caliper.testing.mcp_echo [--log FILE]
    python -m caliper.testing.mcp_echo --http [--port 0] [--port-file F] [--log FILE]

What the pinned CLIs send (all put ``Authorization`` on every request, probes included):
every POST accepts both ``application/json`` and ``text/event-stream``; all open a GET
stream after ``initialize`` (answered 405) and, except Claude Code, DELETE the session at the
end; Hermes first probes the URL with HEAD and GET; Claude Code 2.1 first POSTs
``server/discover`` without a session (answered 400) and then falls back to ``initialize``.

From Python (e.g. a pytest fixture)::

    with HttpEchoServer() as server:
        ...  # give the agent server.url
        assert server.headers_seen("authorization") == {"Bearer s3cret"}
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
import uuid
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import attrs

from caliper.system import attrs_classes
from caliper.testing.background_http import BackgroundHttpServer, QuietServer

SERVER_INFO = {"name": "caliper-mcp-echo", "version": "0.1.0"}
DEFAULT_PROTOCOL = "2025-06-18"
ECHO_TOOL = {
    "name": "echo",
    "description": "Echo the given text back, prefixed with 'echo: '.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "Text to echo."}},
        "required": ["text"],
    },
}


def handle(message: dict[str, Any]) -> dict[str, Any] | None:
    """The reply to one JSON-RPC message (None for notifications)."""
    method = message.get("method")
    params = message.get("params") or {}
    if "id" not in message:
        return None
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    if method == "initialize":
        reply["result"] = {
            "protocolVersion": params.get("protocolVersion", DEFAULT_PROTOCOL),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": SERVER_INFO,
        }
    elif method == "tools/list":
        reply["result"] = {"tools": [ECHO_TOOL]}
    elif method == "tools/call":
        args = params.get("arguments") or {}
        if params.get("name") != "echo":
            reply["result"] = {
                "content": [{"type": "text", "text": f"unknown tool {params.get('name')!r}"}],
                "isError": True,
            }
        else:
            text = f"echo: {args.get('text', '')}"
            reply["result"] = {"content": [{"type": "text", "text": text}], "isError": False}
    elif method == "ping":
        reply["result"] = {}
    elif method in ("resources/list", "prompts/list", "resources/templates/list"):
        key = method.split("/")[0] if method != "resources/templates/list" else "resourceTemplates"
        reply["result"] = {key: []}
    else:
        reply["error"] = {"code": -32601, "message": f"method not found: {method}"}
    return reply


def serve(log: Path | None) -> int:
    """Read messages until stdin closes."""
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if log is not None:
            with log.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(message) + "\n")
        if not isinstance(message, dict):
            continue
        reply = handle(message)
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
    return 0


@attrs_classes.frozen
class HttpRequest:
    """One HTTP request the echo server received, and how it was answered.

    ``headers`` have lowercased names; ``body`` is the parsed JSON (None when absent, the raw
    text when not JSON); ``sse`` says whether the answer was an SSE stream.
    """

    verb: str
    path: str
    headers: dict[str, str]
    body: Any
    status: int
    sse: bool = False

    def messages(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages in the body (a batch is flattened)."""
        items = self.body if isinstance(self.body, list) else [self.body]
        return [m for m in items if isinstance(m, dict)]

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready mapping (one line of the log)."""
        return attrs.asdict(self)


class _EchoHandler(BaseHTTPRequestHandler):
    server: QuietServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: requests are recorded, not printed."""

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and self.command != "HEAD":
            self.wfile.write(body)

    def _record(self, body: Any, status: int, sse: bool = False) -> None:
        headers = {name.lower(): value for name, value in self.headers.items()}
        self.server.owner.record(HttpRequest(self.command, self.path, headers, body, status, sse))

    def _on_endpoint(self) -> bool:
        return self.path.split("?", 1)[0].rstrip("/") == self.server.owner.path.rstrip("/")

    def do_GET(self) -> None:
        """No server-initiated stream: 405 on the endpoint, 404 elsewhere (e.g. OAuth probes)."""
        status = 405 if self._on_endpoint() else 404
        self._record(None, status)
        self._send(status, headers={"Allow": "POST, DELETE"} if status == 405 else None)

    do_HEAD = do_GET

    def do_DELETE(self) -> None:
        """End the session named in ``Mcp-Session-Id``."""
        session = self.headers.get("Mcp-Session-Id")
        owner = self.server.owner
        status = 404
        if self._on_endpoint() and session and owner.end_session(session):
            status = 200
        self._record(None, status)
        self._send(status)

    def do_POST(self) -> None:
        """JSON-RPC over Streamable HTTP."""
        raw = self._body()
        try:
            body = json.loads(raw) if raw else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            self._record(raw.decode("utf-8", "replace"), 400)
            self._send(400, _error_body(None, -32700, "parse error"), _JSON)
            return
        if not self._on_endpoint():
            self._record(body, 404)
            self._send(404)
            return
        status, payload, headers = self.server.owner.answer(body, self.headers)
        accept = (self.headers.get("Accept") or "").lower()
        sse = (
            payload is not None
            and "text/event-stream" in accept
            and (self.server.owner.prefer_sse or "application/json" not in accept)
        )
        self._record(body, status, sse)
        if payload is None:
            self._send(status, headers=headers)
        elif sse:
            event = f"event: message\ndata: {json.dumps(payload)}\n\n".encode()
            self._send(status, event, {**headers, "Content-Type": "text/event-stream"})
        else:
            self._send(status, json.dumps(payload).encode(), {**headers, **_JSON})


_JSON = {"Content-Type": "application/json"}


def _error_body(message_id: Any, code: int, text: str) -> bytes:
    error = {"jsonrpc": "2.0", "id": message_id, "error": {"code": code, "message": text}}
    return json.dumps(error).encode()


class HttpEchoServer(BackgroundHttpServer):
    """The echo tool over Streamable HTTP, on 127.0.0.1, in a background thread.

    ``path`` is the MCP endpoint (``url`` ends with it). With ``require_session`` (default), a
    request other than ``initialize`` must carry the ``Mcp-Session-Id`` the server handed out
    (missing: 400, unknown: 404), as the transport specification asks. ``prefer_sse`` answers
    with an SSE stream even when the client accepts JSON. ``required_headers`` (name → value)
    must be on every POST, else 401, as a server checking a token would answer. Every request
    is kept in :attr:`requests` and, when ``log`` is given, appended to it as a JSON line.
    """

    handler_class = _EchoHandler

    def __init__(
        self,
        *,
        port: int = 0,
        path: str = "/mcp",
        log: Path | None = None,
        require_session: bool = True,
        prefer_sse: bool = False,
        required_headers: Mapping[str, str] | None = None,
    ):
        super().__init__(port=port)
        self.required_headers = {k.lower(): v for k, v in (required_headers or {}).items()}
        self.path = path if path.startswith("/") else f"/{path}"
        self.log = log
        self.require_session = require_session
        self.prefer_sse = prefer_sse
        self._lock = threading.Lock()
        self._requests: list[HttpRequest] = []
        self._sessions: set[str] = set()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT/mcp``: what a spec's ``url:`` points at."""
        return f"http://127.0.0.1:{self.port}{self.path}"

    # what tests read ---------------------------------------------------------------------
    @property
    def requests(self) -> list[HttpRequest]:
        """Every request so far, oldest first."""
        with self._lock:
            return list(self._requests)

    def messages(self, method: str | None = None) -> list[dict[str, Any]]:
        """JSON-RPC messages received (only ``method`` ones when given)."""
        found = [m for r in self.requests for m in r.messages()]
        return [m for m in found if method is None or m.get("method") == method]

    def headers_seen(self, name: str) -> set[str]:
        """Every value header ``name`` had on a POST to the endpoint."""
        key = name.lower()
        return {r.headers[key] for r in self.requests if r.verb == "POST" and key in r.headers}

    # serving -----------------------------------------------------------------------------
    def record(self, request: HttpRequest) -> None:
        """Keep ``request`` (and log it)."""
        with self._lock:
            self._requests.append(request)
            if self.log is not None:
                with self.log.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(request.to_json()) + "\n")

    def end_session(self, session: str) -> bool:
        """Forget ``session``; False when it was not open."""
        with self._lock:
            if session not in self._sessions:
                return False
            self._sessions.discard(session)
            return True

    def answer(self, body: Any, headers: Any) -> tuple[int, Any, dict[str, str]]:
        """``(status, JSON payload or None, extra headers)`` for one POST body."""
        for name, value in self.required_headers.items():
            if headers.get(name) != value:
                return 401, json.loads(_error_body(None, -32001, f"bad {name} header")), {}
        items = body if isinstance(body, list) else [body]
        if not items or not all(isinstance(m, dict) for m in items):
            return 400, json.loads(_error_body(None, -32600, "invalid request")), {}
        initializing = any(m.get("method") == "initialize" for m in items)
        extra: dict[str, str] = {}
        if initializing:
            session = uuid.uuid4().hex
            with self._lock:
                self._sessions.add(session)
            extra["Mcp-Session-Id"] = session
        elif self.require_session:
            session = headers.get("Mcp-Session-Id")
            if not session:
                return 400, json.loads(_error_body(None, -32600, "missing Mcp-Session-Id")), {}
            with self._lock:
                known = session in self._sessions
            if not known:
                return 404, json.loads(_error_body(None, -32001, "unknown session")), {}
        replies = [r for r in map(handle, items) if r is not None]
        if not replies:
            return 202, None, extra
        return 200, replies if isinstance(body, list) else replies[0], extra


def _write_port(port_file: Path, port: int) -> None:
    """Write the port atomically, so a reader never sees a half-written file."""
    partial = port_file.with_name(port_file.name + ".partial")
    partial.write_text(f"{port}\n", encoding="utf-8")
    partial.replace(port_file)


def serve_http(
    *, port: int, port_file: Path | None, log: Path | None, path: str, prefer_sse: bool
) -> int:
    """Serve over HTTP until SIGTERM/SIGINT."""
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    server = HttpEchoServer(port=port, path=path, log=log, prefer_sse=prefer_sse).start()
    try:
        if port_file is not None:
            _write_port(port_file, server.port)
        print(server.url, flush=True)
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
    return 0


@contextlib.contextmanager
def http_echo_server(**kwargs: Any) -> Iterator[HttpEchoServer]:
    """``with http_echo_server(log=...) as server:`` — started, and stopped on exit."""
    server = HttpEchoServer(**kwargs).start()
    try:
        yield server
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(prog="python -m caliper.testing.mcp_echo")
    parser.add_argument("--log", help="append received messages here (default: $MCP_ECHO_LOG)")
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="HTTP port (default: any free one)")
    parser.add_argument("--port-file", help="write the bound HTTP port here once listening")
    parser.add_argument("--path", default="/mcp", help="HTTP endpoint path (default: /mcp)")
    parser.add_argument("--sse", action="store_true", help="answer POSTs as SSE streams")
    args = parser.parse_args(argv)
    log = args.log or os.environ.get("MCP_ECHO_LOG")
    if args.http:
        return serve_http(
            port=args.port,
            port_file=Path(args.port_file) if args.port_file else None,
            log=Path(log) if log else None,
            path=args.path,
            prefer_sse=args.sse,
        )
    if args.port_file or args.sse:
        parser.error("--port-file and --sse need --http")
    return serve(Path(log) if log else None)


if __name__ == "__main__":
    sys.exit(main())
