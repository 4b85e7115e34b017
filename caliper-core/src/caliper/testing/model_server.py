"""A scripted model server for tests: Anthropic Messages, OpenAI Responses, Chat Completions.

It speaks every wire API in :mod:`caliper.testing.wire_registry` (those three built in, plus
any a plugin registers, see :class:`~caliper.testing.wire_protocol.WireProtocol`).

Standard library HTTP only; binds 127.0.0.1 (port 0 by default). Every request is recorded
(secrets redacted) so tests can check what the agent sent the model.

    with ModelServer({"turns": [{"text": "hello"}]}) as server:
        ...  # point the agent at server.url
        assert "my-skill" in server.requests[0].sent_text()

Command line: ``python -m caliper.testing.model_server --script S.yaml [--port 0]
[--port-file F] [--log requests.jsonl] [--wire my_plugin.wire_gemini ...]``.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import importlib
import json
import signal
import socket
import sys
import threading
import time
import zlib
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import attrs

from caliper.errors import CaliperError
from caliper.system import attrs_classes
from caliper.testing.background_http import BackgroundHttpServer, QuietServer
from caliper.testing.conversation import Conversation, as_json_text, new_call_id
from caliper.testing.placeholders import fill
from caliper.testing.reply import Reply, ReplyCall
from caliper.testing.script import (
    Script,
    ScriptedError,
    ScriptedUsage,
    Turn,
    as_script,
    unknown_apis,
)
from caliper.testing.selector import Choice, Selector
from caliper.testing.wire_protocol import WireProtocol
from caliper.testing.wire_registry import register_wire, wire_for_path, wire_names

SECRET_HEADERS = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "cookie", "x-goog-api-key"}
)


def redact(name: str, value: str) -> str:
    """A header value safe to log: secrets keep only their scheme and first four characters."""
    if name.lower() not in SECRET_HEADERS:
        return value
    scheme, _, secret = value.partition(" ") if " " in value else ("", "", value)
    head = f"{scheme} " if scheme else ""
    return f"{head}{secret[:4]}…<redacted>"


def api_for(path: str) -> str | None:
    """The name of the registered wire API a POST path belongs to, or None."""
    wire = wire_for_path(path)
    return wire.name if wire is not None else None


@attrs_classes.frozen
class RecordedRequest:
    """One request the server received, and how it was answered.

    ``outcome`` is ``answer``, ``fallback`` (script had nothing left), ``error``, ``drop`` or
    ``other`` (probes, model lists, unknown paths). ``answered_by`` names the script entry,
    e.g. ``turns[2]`` or ``rules[0].turns[1]``.
    """

    index: int
    time: float
    method: str
    path: str
    headers: Mapping[str, str]
    body: Any
    api: str | None = None
    position: int | None = None
    answered_by: str | None = None
    outcome: str = "other"
    unresolved: tuple[str, ...] = ()
    tool_calls: tuple[str, ...] = ()
    conversation: Conversation | None = attrs.field(default=None, eq=False, repr=False)

    def sent_text(self, *, include_tools: bool = True) -> str:
        """All text the model was sent in this request (system, messages, tool results, tools)."""
        return self.conversation.sent_text(include_tools=include_tools) if self.conversation else ""

    @property
    def model(self) -> str | None:
        """The model a model request asked for (as its wire reads it: body or URL), or None."""
        return self.conversation.model if self.conversation else None

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (the ``--log`` line format)."""
        data = attrs.asdict(self, filter=lambda a, _: a.name != "conversation")
        data["headers"] = dict(self.headers)
        return data


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: QuietServer

    def log_message(self, format: str, *args: Any) -> None:
        """Keep test output quiet: requests are recorded, not printed."""

    def _read_chunked(self) -> bytes:
        chunks = []
        while True:
            size = int(self.rfile.readline().strip().split(b";")[0] or b"0", 16)
            if size == 0:
                while self.rfile.readline().strip():  # trailers, then the blank line
                    pass
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()

    def _read_body(self) -> bytes:
        """The request body, de-chunked and decompressed (gzip/deflate)."""
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            raw = self._read_chunked()
        else:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
        encoding = self.headers.get("Content-Encoding", "").strip().lower()
        try:
            if encoding in ("gzip", "x-gzip"):
                return gzip.decompress(raw)
            if encoding == "deflate":
                return zlib.decompress(raw)
        except (OSError, zlib.error, EOFError):
            return b""
        return raw

    def _send(self, status: int, body: bytes, content_type: str, extra: dict[str, str]) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in extra.items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: Any, extra: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode(), "application/json", extra or {})

    def do_HEAD(self) -> None:
        """Connection probes (Claude Code sends ``HEAD /``): always 200."""
        self.server.owner._record(self, None)
        self._send(200, b"", "text/plain", {})

    def do_GET(self) -> None:
        """Model lists (``…/models``, ``…/models/<id>``); anything else is a 404."""
        owner = self.server.owner
        owner._record(self, None)
        bare = self.path.split("?", 1)[0].rstrip("/")
        models = owner.script.models
        entries = [
            {
                "id": m,
                "object": "model",
                "type": "model",
                "display_name": m,
                "created": 0,
                "created_at": "2026-01-01T00:00:00Z",
                "owned_by": "caliper-testing",
            }
            for m in models
        ]
        if bare.endswith("/models"):
            self._json(200, {"object": "list", "data": entries, "has_more": False})
            return
        head, _, last = bare.rpartition("/")
        if head.endswith("/models") and last in models:
            self._json(200, entries[models.index(last)])
            return
        self._json(404, {"error": {"message": f"no route for GET {bare}", "type": "not_found"}})

    def do_POST(self) -> None:
        """Model requests on every registered wire API (the wire is chosen by the path)."""
        owner = self.server.owner
        raw = self._read_body()
        wire = wire_for_path(self.path)
        api = wire.name if wire is not None else None
        try:
            body = json.loads(raw) if raw else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        if wire is None or not isinstance(body, dict):
            owner._record(self, raw.decode("utf-8", "replace"), api=api)
            what = "unknown path" if api is None else "body is not a JSON object"
            if api is not None and self.headers.get("Content-Encoding"):
                what += f" (Content-Encoding {self.headers['Content-Encoding']!r})"
            self._json(404 if api is None else 400, {"error": {"message": what}})
            return
        conv = attrs.evolve(
            wire.parse(body),
            api=wire.name,
            model=wire.model_from(self.path, body),
            stream=wire.stream_from(self.path, body),
        )
        choice = owner.selector.choose(conv)
        turn = choice.turn
        if turn is not None and turn.delay:
            owner._stopping.wait(turn.delay)
        if turn is not None and turn.drop:
            owner._record(self, body, conv=conv, choice=choice, outcome="drop")
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return
        if turn is not None and turn.error is not None:
            owner._record(self, body, conv=conv, choice=choice, outcome="error")
            self._error(wire, turn.error)
            return
        reply, unresolved = owner._reply(turn, choice, conv, wire)
        owner._record(
            self,
            body,
            conv=conv,
            choice=choice,
            outcome="fallback" if turn is None else "answer",
            unresolved=unresolved,
            reply=reply,
        )
        if conv.stream:
            self._send(
                200, wire.reply_sse(reply), "text/event-stream", {"Cache-Control": "no-cache"}
            )
        else:
            self._json(200, wire.reply_json(reply))

    def _error(self, wire: WireProtocol, error: ScriptedError) -> None:
        extra = {}
        if error.retry_after is not None:
            extra["Retry-After"] = f"{error.retry_after:g}"
            extra["retry-after-ms"] = str(int(error.retry_after * 1000))
        self._json(error.status, wire.error_body(error), extra)


class ModelServer(BackgroundHttpServer):
    """A scripted model on 127.0.0.1; use as a context manager or call start()/stop()."""

    handler_class = _Handler

    def __init__(
        self,
        script: Script | Mapping[str, Any] | str | Path,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: str | Path | None = None,
    ):
        super().__init__(host=host, port=port)
        self.script = as_script(script)
        unknown = unknown_apis(self.script, wire_names())
        if unknown is not None:
            raise unknown
        self.selector = Selector(self.script)
        self.log_path = Path(log_path) if log_path else None
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    # lifecycle -----------------------------------------------------------------------------
    def start(self) -> ModelServer:
        """Bind and serve in a background thread; returns self."""
        self._stopping.clear()
        return super().start()

    def stop(self) -> None:
        """Stop serving (ends pending ``delay`` waits) and close the socket."""
        self._stopping.set()
        super().stop()

    # addresses -----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (Anthropic-style base URL; clients append ``/v1/...``)."""
        return f"http://{self.host}:{self._port}"

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` (OpenAI-style base URL)."""
        return f"{self.url}/v1"

    # recordings ----------------------------------------------------------------------------
    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    def model_requests(self, api: str | None = None) -> list[RecordedRequest]:
        """Only the model calls (POSTs on a wire API), optionally of one ``api``."""
        return [r for r in self.requests if r.conversation and (api is None or r.api == api)]

    def sent_texts(self, *, include_tools: bool = True) -> list[str]:
        """The text sent to the model in each model request."""
        return [r.sent_text(include_tools=include_tools) for r in self.model_requests()]

    def all_sent_text(self, *, include_tools: bool = True) -> str:
        """Every model request's text joined: "did X ever reach the model?"."""
        return "\n".join(self.sent_texts(include_tools=include_tools))

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> list[RecordedRequest]:
        """Wait until ``count`` requests arrived (or ``timeout`` seconds); return them all."""
        deadline = time.monotonic() + timeout
        while len(self._requests) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return self.requests

    # internals -----------------------------------------------------------------------------
    def _reply(
        self, turn: Turn | None, choice: Choice, conv: Conversation, wire: WireProtocol
    ) -> tuple[Reply, tuple[str, ...]]:
        unresolved: list[str] = []
        text_seen = conv.sent_text()
        model = (turn.model if turn else None) or conv.model or self.script.models[0]
        if turn is None:
            return Reply(model, self.script.fallback_text, (), ScriptedUsage()), ()
        calls = tuple(
            ReplyCall(
                id=new_call_id(wire.CALL_ID_PREFIX, choice.position),
                name=call.name,
                arguments=as_json_text(fill(call.arguments, text_seen, unresolved)),
                namespace=call.namespace,
                custom=call.custom,
            )
            for call in turn.tool_calls
        )
        text = fill(turn.text, text_seen, unresolved) if turn.text else turn.text
        reply = Reply(model, text, calls, turn.usage, turn.reasoning)
        return reply, tuple(unresolved)

    def _record(
        self,
        handler: _Handler,
        body: Any,
        *,
        api: str | None = None,
        conv: Conversation | None = None,
        choice: Choice | None = None,
        outcome: str = "other",
        unresolved: tuple[str, ...] = (),
        reply: Reply | None = None,
    ) -> None:
        headers = {k.lower(): redact(k, v) for k, v in handler.headers.items()}
        with self._lock:
            record = RecordedRequest(
                index=len(self._requests),
                time=time.time(),
                method=handler.command,
                path=handler.path,
                headers=headers,
                body=body,
                api=conv.api if conv else api,
                position=choice.position if choice else None,
                answered_by=choice.label if choice else None,
                outcome=outcome,
                unresolved=unresolved,
                tool_calls=tuple(c.flat_name for c in reply.tool_calls) if reply else (),
                conversation=conv,
            )
            self._requests.append(record)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(record.to_json()) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Command line: serve a script until interrupted (SIGINT/SIGTERM)."""
    parser = argparse.ArgumentParser(
        prog="python -m caliper.testing.model_server",
        description="Serve a scripted model on 127.0.0.1 (Anthropic, Responses, Chat APIs, "
        "and those of --wire modules).",
    )
    parser.add_argument("--script", required=True, help="script file (YAML or JSON)")
    parser.add_argument("--port", type=int, default=0, help="port (default 0: pick a free one)")
    parser.add_argument("--port-file", help="write the bound port to this file")
    parser.add_argument("--log", help="append one JSON line per request to this file")
    parser.add_argument(
        "--wire",
        action="append",
        default=[],
        metavar="MODULE",
        help="also speak the wire API of this importable module (repeatable)",
    )
    args = parser.parse_args(argv)
    for name in args.wire:
        try:
            register_wire(importlib.import_module(name))
        except (ImportError, TypeError, ValueError) as exc:
            print(f"error: --wire {name}: {exc}", file=sys.stderr)
            return 2
    try:
        server = ModelServer(args.script, port=args.port, log_path=args.log).start()
    except CaliperError as exc:
        print(f"error: {exc.render()}", file=sys.stderr)
        return exc.exit_code
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    if args.port_file:
        tmp = Path(args.port_file + ".tmp")
        tmp.write_text(f"{server.port}\n")
        tmp.replace(args.port_file)
    print(f"serving {server.url}", flush=True)
    try:
        done.wait()
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
