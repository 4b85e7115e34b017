"""The warm ``assert:`` server: a Python started once per run that forks a fresh child per assert.

Usage: ``python _warm_server.py SOCKET_PATH``. It imports what an assert needs up front, then
waits. Each connection brings the child's stdin, stdout and stderr (as file descriptors) and a
JSON request (working directory, complete environment, the runner's arguments); the server
forks, the child answers ``{"pid": N}`` before it runs anything, and the server answers
``{"status": CODE}`` when that child has exited. So caliper knows the pid of every child that
may run an assert: if the server dies before its child announced itself, no assert runs there
and caliper may run it in a fresh interpreter instead. The child starts its own session,
takes the descriptors, the folder and the environment, and runs :func:`_assert_runner.main`
exactly as a fresh ``python _assert_runner.py …`` would, so an assert sees nothing of the one
before it. The server ends when its stdin closes (caliper
exited or finished the run). Kept free of caliper imports, like the runner.
"""

import contextlib
import json
import os
import selectors
import signal
import socket
import sys

import _assert_runner  # imported here, warm, for every child

PRELOAD = ("pathlib", "re", "subprocess", "shutil", "glob", "tempfile", "csv", "collections")
"""Standard modules most asserts import: loaded once here, so a child finds them ready. (An
assert sees them in ``sys.modules`` early; it would load the same modules itself.)"""

READ_LIMIT = 64 * 1024 * 1024


def _child(request, fds, conn):
    """In the forked child: announce its pid on ``conn``, become a fresh assert process and
    run it; never returns. A child that cannot announce itself exits before running
    anything."""
    code = 70
    try:
        signal.set_wakeup_fd(-1)  # the server's wake-up pipe and handler are not the child's
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
    except BaseException:
        os._exit(code)
    try:
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        os.closerange(3, 1 << 16)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = [_assert_runner.__file__, *request["args"]]
        code = _assert_runner.main()
    except BaseException:  # the child must never return into the server loop
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _receive(conn):
    """(request, [stdin, stdout, stderr]) from one connection."""
    _, fds, _, _ = socket.recv_fds(conn, 1, 3)
    chunks, size = [], 0
    while chunk := conn.recv(65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > READ_LIMIT:
            raise ValueError("request too large")
    return json.loads(b"".join(chunks)), fds


def serve(path):
    """Accept requests on the Unix socket ``path`` until stdin closes."""
    sys.dont_write_bytecode = True
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            __import__(name)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path + ".starting")
    listener.listen(64)
    os.rename(path + ".starting", path)  # the socket appears only once it accepts
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(wake_r, selectors.EVENT_READ, "child")
    selector.register(0, selectors.EVENT_READ, "parent")
    waiting = {}
    while True:
        for key, _ in selector.select():
            if key.data == "parent":
                if not os.read(0, 4096):
                    return
            elif key.data == "accept":
                conn, _ = listener.accept()
                fds = []
                try:
                    request, fds = _receive(conn)
                    pid = os.fork()
                    if pid == 0:
                        _child(request, fds, conn)
                    waiting[pid] = conn
                except (OSError, ValueError):
                    conn.close()
                finally:
                    for fd in fds:
                        os.close(fd)
            else:
                while True:
                    try:
                        os.read(wake_r, 4096)
                    except BlockingIOError:
                        break
                while True:
                    try:
                        pid, status = os.waitpid(-1, os.WNOHANG)
                    except ChildProcessError:
                        break
                    if pid == 0:
                        break
                    conn = waiting.pop(pid, None)
                    if conn is not None:
                        code = os.waitstatus_to_exitcode(status)
                        with contextlib.suppress(OSError):
                            conn.sendall(json.dumps({"status": code}).encode() + b"\n")
                        conn.close()


if __name__ == "__main__":
    serve(sys.argv[1])
