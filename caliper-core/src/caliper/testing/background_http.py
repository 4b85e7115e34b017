"""A local HTTP server serving from a daemon thread: the lifecycle the test servers share.

The scripted model server and the HTTP echo MCP server both bind 127.0.0.1 (port 0 by
default), serve in the background, stop cleanly, and treat clients that hang up as normal.
"""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from caliper.errors import CaliperError


class QuietServer(ThreadingHTTPServer):
    """A threading server whose handlers reach their owner as ``self.server.owner``."""

    daemon_threads = True
    allow_reuse_address = True
    owner: Any

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (killed agent, dropped turn) is normal here: stay quiet."""
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class BackgroundHttpServer:
    """Start/stop/context-manager lifecycle; subclasses set ``handler_class``.

    ``port`` is the bound port once started, and stays known after :meth:`stop` (so a test
    can point a client at a server that is down).
    """

    handler_class: type[BaseHTTPRequestHandler]
    server_class: type[QuietServer] = QuietServer

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0):
        self.host = host
        self._port = port
        self._httpd: QuietServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Any:
        """Bind and serve in a daemon thread; returns self."""
        if self._httpd is not None:
            return self
        try:
            httpd = self.server_class((self.host, self._port), self.handler_class)
        except OSError as exc:
            raise CaliperError(
                f"{type(self).__name__} cannot listen on {self.host}:{self._port}: {exc.strerror}",
                hint="Use port 0 to let the system pick a free port.",
            ) from None
        httpd.owner = self
        self._httpd = httpd
        self._port = int(httpd.server_address[1])
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (after :meth:`start`; kept after :meth:`stop`)."""
        return self._port
