"""Stopping a run cleanly on Ctrl-C.

On SIGINT the run stops scheduling, every agent process group is killed
(``caliper.process.stop_all``), and attempts still in flight skip straight to their cleanup.
Cleanup commands are held back until no attempt is still starting or running a process, then
process spawning is re-enabled so each cleanup runs to completion.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType

from caliper import process

DRAIN_SECONDS = 15.0


class Stopped(Exception):
    """Raised inside an attempt when the run was asked to stop before a step began."""


class RunController:
    """Shared stop state of one run (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # re-entrant: the SIGINT handler runs on the main thread
        self._busy = 0
        self.stop_requested = threading.Event()
        self.cleanup_allowed = threading.Event()
        self.cleanup_allowed.set()
        self.stop_reason: str | None = None
        self.killed = False
        self._previous_handler: object = None

    def request_stop(self, reason: str, *, kill: bool = True) -> None:
        """Stop scheduling; with ``kill``, end running agent processes at once."""
        with self._lock:
            if self.stop_requested.is_set():
                return
            self.stop_reason = reason
            self.stop_requested.set()
            if kill:
                self.killed = True
                self.cleanup_allowed.clear()
        if kill:
            process.stop_all()

    def check(self) -> None:
        """Raise :class:`Stopped` when the run was stopped with its processes killed.

        A run stopped without killing (a fatal setup error) lets attempts in flight finish.
        """
        if self.killed:
            raise Stopped()

    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
        """Mark the steps of an attempt that may spawn processes (all but cleanup)."""
        with self._lock:
            if self.stop_requested.is_set():
                raise Stopped()
            self._busy += 1
        try:
            yield
        finally:
            with self._lock:
                self._busy -= 1

    def wait_for_cleanup_turn(self) -> None:
        """Block a cleanup until process spawning is allowed again (bounded)."""
        self.cleanup_allowed.wait(timeout=DRAIN_SECONDS * 2)

    def drain(self) -> None:
        """After a kill: wait until no attempt is busy, then re-enable processes for cleanups."""
        if self.cleanup_allowed.is_set():
            return
        deadline = time.monotonic() + DRAIN_SECONDS
        while time.monotonic() < deadline:
            with self._lock:
                if self._busy == 0:
                    break
            time.sleep(0.05)
        process.reset_stop()
        self.cleanup_allowed.set()

    # -- SIGINT -------------------------------------------------------------------------------
    def _on_sigint(self, _signum: int, _frame: FrameType | None) -> None:
        if self.killed:
            # a second Ctrl-C: the user will not wait, so cut cleanups short too
            process.stop_all()
            return
        self.request_stop("interrupted (Ctrl-C)")

    def install_sigint(self) -> None:
        """Route Ctrl-C to :meth:`request_stop` (main thread only; a no-op elsewhere)."""
        if threading.current_thread() is not threading.main_thread():
            return
        self._previous_handler = signal.signal(signal.SIGINT, self._on_sigint)

    def restore_sigint(self) -> None:
        """Put back the handler that was there before :meth:`install_sigint`."""
        if self._previous_handler is not None:
            signal.signal(signal.SIGINT, self._previous_handler)  # type: ignore[arg-type]
            self._previous_handler = None
