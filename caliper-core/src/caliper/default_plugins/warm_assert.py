"""Caliper's side of the warm ``assert:`` runner (see ``_warm_server.py``).

One server per caliper process, started lazily by the first ``assert:``; every assert is then a
child forked from it instead of a fresh interpreter. Its folder (holding its socket) is a
sandbox of the process's ledger (made in the system temp folder, which keeps the socket's path
short) and the server is a process noted there, so a killed caliper's server and folder are
removed by the next run or ``caliper clean``. The end of the run that started it ends it
(:func:`caliper.system.ledger.stop_at_release`), so a process that goes on (a Ray worker)
keeps no ledger open between runs; its next run's first ``assert:`` starts a new one.
:func:`starter` hands :func:`caliper.system.process.run_process` a way to start the assert
there, so the forked child gets the same treatment as any started process: its own session,
the ``CALIPER_PROCESS_TAG`` marker (in the environment it runs with and hands to what it
starts), the timeout, the kill of its group and of every descendant, bounded output. Where
``fork`` or descriptor passing is missing, when ``CALIPER_WARM_ASSERT=0``, or once the server
has failed or died, asserts run in a fresh interpreter as before.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import BinaryIO

from caliper.system import ledger, process
from caliper.system.temp_root import remove_tree

SERVER = Path(__file__).with_name("_warm_server.py")
START_SECONDS = 10.0
SWITCH = "CALIPER_WARM_ASSERT"
"""Set to ``0`` to run every ``assert:`` in a fresh interpreter."""


def supported() -> bool:
    """Whether this platform can fork a child and pass it file descriptors."""
    return hasattr(os, "fork") and hasattr(socket, "send_fds") and hasattr(socket, "AF_UNIX")


class _RemoteChild:
    """A child forked by the server, seen through the server's answers (a ``StartedProcess``)."""

    def __init__(self, sock: socket.socket, pid: int, server: _Server):
        self.pid = pid
        self.returncode: int | None = None
        self._sock = sock
        self._buffer = b""
        self._server = server

    def _gone(self) -> bool:
        stat = process._read(f"/proc/{self.pid}/stat")
        if stat is None:
            return True
        fields = stat.rsplit(b")", 1)[-1].split()
        return not fields or fields[0] == b"Z"

    def _take_buffered(self) -> None:
        """Read the answers already received (the exit status can come in one read with the
        pid, before the server closes the connection)."""
        while self.returncode is None and b"\n" in self._buffer:
            line, self._buffer = self._buffer.split(b"\n", 1)
            answer = json.loads(line)
            if "status" in answer:
                self.returncode = int(answer["status"])

    def _answer(self, timeout: float | None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            self._take_buffered()
            if self.returncode is not None:
                break
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if self._sock.fileno() < 0:  # the server died: watch the pid itself
                if self._gone():
                    self.returncode = -1
                    break
                if left is not None and left <= 0:
                    return False
                time.sleep(0.01 if left is None else min(0.01, left))
                continue
            ready, _, _ = select.select([self._sock], [], [], left)
            if not ready:
                return False
            chunk = self._sock.recv(4096)
            if not chunk:
                self._sock.close()
                self._server.died()
                continue
            self._buffer += chunk
        if self._sock.fileno() >= 0:
            self._sock.close()
        return True

    def poll(self) -> int | None:
        """The exit code once the server reported it, else ``None`` (never blocks)."""
        if self.returncode is None:
            self._answer(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the server's report of the exit (``TimeoutExpired`` after ``timeout``)."""
        if self.returncode is None and not self._answer(timeout):
            raise subprocess.TimeoutExpired(["assert"], timeout or 0)
        assert self.returncode is not None
        return self.returncode


class _Server:
    """The one warm server of this caliper process (started on first use)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._popen: subprocess.Popen[bytes] | None = None
        self._folder: Path | None = None
        self._socket = ""
        self._dead = False
        self._stop_at_exit = False

    def died(self) -> None:
        """Stop using the server: every later assert runs in a fresh interpreter."""
        self._dead = True

    def _start(self) -> bool:
        # the system temp folder keeps the socket's path short (AF_UNIX allows ~108 bytes)
        self._folder = ledger.new_sandbox_root(Path(tempfile.gettempdir()), "caliper-warm-")
        ledger.stop_at_release(stop)  # the run's end ends the server, so its ledger can go
        if not self._stop_at_exit:
            atexit.register(self.stop)
            self._stop_at_exit = True
        self._socket = os.path.join(self._folder, "s")
        env = {
            **os.environ,
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONIOENCODING": "utf-8",
            process.TAG_VARIABLE: f"{os.getpid()}-warm-assert-server",
        }
        try:
            self._popen = process.start_service(
                [sys.executable, str(SERVER), self._socket], env=env, cwd=self._folder
            )
        except OSError:
            return False
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if os.path.exists(self._socket):
                return True
            if self._popen.poll() is not None:
                return False
            time.sleep(0.005)
        return False

    def available(self) -> bool:
        """Whether asserts can go to the server (starting it if this is the first)."""
        with self._lock:
            if self._dead:
                return False
            if self._popen is None:
                self._dead = not self._start()
            elif self._popen.poll() is not None:
                self._dead = True
            return not self._dead

    def start(
        self,
        argv: list[str],
        stdin: BinaryIO,
        stdout: BinaryIO,
        stderr: BinaryIO,
        cwd: Path,
        env: dict[str, str],
    ) -> process.StartedProcess:
        """Fork ``argv``'s assert in the server; a fresh interpreter if the server fails before
        the forked child announced its pid (the assert then runs once, never twice)."""
        request = json.dumps({"cwd": str(cwd), "env": env, "args": argv[2:]}).encode()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(self._socket)
            socket.send_fds(sock, [b"F"], [stdin.fileno(), stdout.fileno(), stderr.fileno()])
            sock.sendall(request)
            sock.shutdown(socket.SHUT_WR)
            line = b""
            while b"\n" not in line:
                chunk = sock.recv(4096)
                if not chunk:
                    raise OSError("the warm assert server closed the connection")
                line += chunk
            first, rest = line.split(b"\n", 1)
            pid = int(json.loads(first)["pid"])
        except (OSError, ValueError, KeyError):
            # no pid: the forked child (if any) never announced itself, so it runs nothing
            sock.close()
            self.died()
            return process._popen(argv, stdin, stdout, stderr, cwd, env)
        child = _RemoteChild(sock, pid, self)
        child._buffer = rest
        return child

    def stop(self) -> None:
        """End the server (its stdin closes; killed if it does not go within a second)."""
        popen, self._popen = self._popen, None
        if popen is not None:
            with contextlib.suppress(OSError):
                if popen.stdin is not None:
                    popen.stdin.close()
            try:
                popen.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                popen.kill()
                popen.wait()
            process.forget_service(popen)
        folder, self._folder = self._folder, None
        if folder is not None and remove_tree(folder):
            ledger.sandbox_removed(folder)


_server = _Server()


def starter() -> process.Starter | None:
    """How to start an assert warm, or ``None`` when it must run in a fresh interpreter."""
    if os.environ.get(SWITCH, "1") == "0" or not supported():
        return None
    return _server.start if _server.available() else None


def stop() -> None:
    """End the warm server now (a later assert starts a new one)."""
    with _server._lock:
        _server.stop()
        _server._dead = False
