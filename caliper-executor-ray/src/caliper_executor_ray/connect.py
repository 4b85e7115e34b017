"""Connecting this process to a Ray cluster quietly: no telemetry, no dashboard, no uploads.

Ray is imported here, inside :func:`connect`, never when the plugin is listed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from caliper.plugin import SetupError

QUIET_ENVIRONMENT = {
    "RAY_USAGE_STATS_ENABLED": "0",
    # Under `uv run`, Ray would otherwise ship the current folder to every node as the
    # working directory (files that may hold anything) and start workers with `uv run`.
    "RAY_ENABLE_UV_RUN_RUNTIME_ENV": "0",
}
NAMESPACE = "caliper"


def import_ray() -> Any:
    """``ray``, with the quiet settings above applied first (a user's own value wins)."""
    for name, value in QUIET_ENVIRONMENT.items():
        os.environ.setdefault(name, value)
    try:
        with _quiet_stderr():
            import ray
    except ImportError as exc:  # pragma: no cover - the distribution depends on ray
        from caliper.remote import install_command

        raise SetupError(
            f"--executor ray needs the ray package, which cannot be imported: {exc}",
            hint=f"Reinstall its plugin: {install_command('caliper-executor-ray')}.",
        ) from None
    # Ray reads this once, when it is first imported; ray may have been imported before us
    # (by the caller), and a working directory shipped from here is never wanted.
    with contextlib.suppress(ImportError, AttributeError):
        from ray._private import ray_constants

        ray_constants.RAY_ENABLE_UV_RUN_RUNTIME_ENV = False
    return ray


def connect(address: str) -> tuple[Any, bool]:
    """Connect to the cluster at ``address`` (``auto``, ``HOST:PORT`` or ``ray://HOST:PORT``);
    return ``ray`` and whether this call connected (so the session disconnects only then).

    No reachable cluster is one :class:`SetupError` (exit 3) saying how to start one.
    """
    ray = import_ray()
    if ray.is_initialized():
        return ray, False
    import logging
    import signal

    unreachable = _unreachable(address)
    if unreachable is not None:
        raise _no_cluster(address, unreachable)
    # ray.init installs its own SIGTERM handler (sys.exit); the run's stop handling owns the
    # signals, so whatever was there before is put back
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with _quiet_stderr():
            ray.init(
                address=address,
                namespace=NAMESPACE,
                log_to_driver=False,
                logging_level=logging.ERROR,
                configure_logging=True,
            )
    except Exception as exc:  # ConnectionError, or Ray's own errors for a bad address
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise _no_cluster(address, first) from None
    finally:
        for sig, handler in handlers.items():
            if handler is not None:
                signal.signal(sig, handler)
    return ray, True


def _no_cluster(address: str, why: str) -> SetupError:
    return SetupError(
        f"--executor ray: no Ray cluster could be reached at {address!r} ({why}).",
        hint="Start one (`ray start --head` on the head node, `ray start --address "
        "HEAD:6379` on the others) and pass --ray-address HEAD:6379 or "
        "ray://HEAD:10001; `auto` finds a cluster started on this machine.",
    )


CONNECT_SECONDS = 10.0


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Keep what Ray's C++ core writes straight to file descriptor 2 while it connects (a
    warning about finding this machine's IP, log-level notes) off the user's terminal."""
    import sys

    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as devnull:
            os.dup2(devnull.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _unreachable(address: str) -> str | None:
    """Why ``HOST:PORT`` (or ``ray://HOST:PORT``) does not answer, ``None`` when it does or
    the address is not of that form (``auto``): Ray itself would wait minutes for it."""
    import socket

    bare = address.removeprefix("ray://")
    host, sep, port = bare.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return None
    try:
        with socket.create_connection((host.strip("[]"), int(port)), CONNECT_SECONDS):
            return None
    except OSError as exc:
        return exc.strerror or type(exc).__name__
