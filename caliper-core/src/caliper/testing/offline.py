"""Run a command with no network but loopback: a fresh network namespace holding only ``lo``.

    python -m caliper.testing.offline -- pytest -q

Uses ``unshare -n`` as root and ``unshare -rn`` (a user namespace) otherwise, brings ``lo`` up
inside, then replaces itself with the command, so the exit code and signals are the
command's own. When namespaces are not available the command runs anyway, with
``CALIPER_OFFLINE=unavailable:<reason>`` in its environment and a warning on stderr; inside a
namespace it sees ``CALIPER_OFFLINE=loopback``. End-to-end fixtures call
:func:`loopback_only` and skip when it is false.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import socket
import struct
import subprocess
import sys

_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1
_INSIDE_FLAG = "--inside-namespace"

SKIP_REASON = (
    "not in a loopback-only network namespace; run the tests through "
    "`python -m caliper.testing.offline -- pytest` to put them in one"
)


def interfaces() -> list[str]:
    """Network interfaces of the namespace this process is in.

    ``/sys/class/net`` is not used: it shows the namespace of whoever mounted sysfs, so it
    still lists the host's interfaces after ``unshare -n``.
    """
    return sorted(name for _, name in socket.if_nameindex())


def _loopback_works() -> bool:
    with contextlib.suppress(OSError), socket.socket() as server, socket.socket() as client:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        client.settimeout(2)
        client.connect(server.getsockname())
        return True
    return False


def loopback_only() -> tuple[bool, str]:
    """(True, why) when the only interface is a working ``lo``; else (False, why not)."""
    try:
        names = interfaces()
    except OSError as exc:
        return False, f"cannot list network interfaces: {exc.strerror}"
    others = [n for n in names if n != "lo"]
    if others:
        return False, f"network interfaces besides lo are present: {', '.join(others)}"
    if not _loopback_works():
        return False, "only lo is present but it is down (run `ip link set lo up`)"
    return True, "only the loopback interface is present and up"


def bring_loopback_up() -> None:
    """Set ``lo`` up in the current namespace (what ``ip link set lo up`` does)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sh14x", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(sock, _SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(sock, _SIOCSIFFLAGS, struct.pack("16sh14x", b"lo", flags | _IFF_UP))


def unshare_argv() -> list[str]:
    """The ``unshare`` command that makes a new network namespace for this user."""
    return ["unshare", "-n"] if os.geteuid() == 0 else ["unshare", "-rn"]


def namespace_problem() -> str | None:
    """Why a network namespace cannot be made here (None when it can)."""
    if sys.platform != "linux":
        return f"network namespaces need Linux (this is {sys.platform})"
    if shutil.which("unshare") is None:
        return "the unshare command (util-linux) is not installed"
    try:
        probe = subprocess.run(
            [*unshare_argv(), "true"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare failed: {exc}"
    if probe.returncode != 0:
        detail = probe.stderr.strip().splitlines()[-1:] or [f"exit {probe.returncode}"]
        return f"unshare failed: {detail[0]}"
    return None


def _exec(command: list[str], env: dict[str, str]) -> int:
    try:
        os.execvpe(command[0], command, env)
    except OSError as exc:
        print(f"offline: cannot run {command[0]!r}: {exc.strerror}", file=sys.stderr)
        return 127
    return 0  # pragma: no cover - execvpe does not return


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``python -m caliper.testing.offline [--] COMMAND [ARGS...]``."""
    args = list(sys.argv[1:] if argv is None else argv)
    inside = bool(args) and args[0] == _INSIDE_FLAG
    if inside:
        args = args[1:]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        print("usage: python -m caliper.testing.offline -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    env = dict(os.environ)
    if inside:
        try:
            bring_loopback_up()
        except OSError as exc:
            print(f"offline: cannot bring lo up: {exc.strerror}", file=sys.stderr)
            return 1
        env["CALIPER_OFFLINE"] = "loopback"
        return _exec(args, env)
    if loopback_only()[0]:
        env["CALIPER_OFFLINE"] = "loopback"
        return _exec(args, env)
    problem = namespace_problem()
    if problem is not None:
        print(f"offline: running WITH network, {problem}", file=sys.stderr)
        env["CALIPER_OFFLINE"] = f"unavailable:{problem}"
        return _exec(args, env)
    me = [sys.executable, "-m", "caliper.testing.offline", _INSIDE_FLAG, "--"]
    return _exec([*unshare_argv(), *me, *args], env)


if __name__ == "__main__":
    sys.exit(main())
