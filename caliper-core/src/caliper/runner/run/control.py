"""Stopping a run cleanly on Ctrl-C (``SIGINT``), ``SIGTERM`` and ``SIGHUP``.

On any of the three the run stops scheduling, every agent process is ended
(``caliper.system.process.stop_all``, which spares running cleanups), and attempts still in flight
skip straight to their cleanup. Cleanup commands are held back until no attempt is still
starting or running a process, then each runs to completion (up to ``--setup-timeout``); the
run says on stderr, at once, what it is waiting for. The same signal a second time ends the
cleanups too. The finished attempts are saved as a partial run and the exit code is
128 + the signal number (130, 143, 129).

A signal that was ignored when caliper started (``nohup`` ignores ``SIGHUP``) stays ignored.

While the handlers are installed, the stop messages are written by one writer thread: a signal
handler only queues its lines. Writing from the handler itself could land inside a write the
main thread was making to the same stream, which Python refuses ("reentrant call") and the
line would be lost.
"""

from __future__ import annotations

import contextlib
import math
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType

from caliper.system import process, stop_policy

DRAIN_SECONDS = 15.0
HANDLED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
SIGNAL_NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}


class Stopped(Exception):
    """Raised inside an attempt when the run was asked to stop before a step began."""


def signal_label(signum: int) -> str:
    """How a stop signal is named to the user (``Ctrl-C`` for ``SIGINT``)."""
    return SIGNAL_NAMES.get(signum, signal.Signals(signum).name)


class RunController:
    """Shared stop state of one run (thread-safe).

    ``notify`` receives one-line messages for the user (printed on stderr by the runner).
    """

    def __init__(self, notify: Callable[[str], None] | None = None) -> None:
        self._lock = threading.RLock()  # re-entrant: signal handlers run on the main thread
        self._busy = 0
        self.stop_requested = threading.Event()
        self.cleanup_allowed = threading.Event()
        self.cleanup_allowed.set()
        self.stop_reason: str | None = None
        self.stop_signal: int | None = None
        self.killed = False
        self.forced = False
        self._notify = notify
        self._cleanups: dict[int, tuple[str, float]] = {}
        """Running cleanups: task name and the monotonic time their budget runs out."""
        self._cleanup_ids = iter(range(1, 1 << 62))
        self._previous: dict[int, object] = {}
        self._outbox: queue.SimpleQueue[str | None] | None = None
        """Lines waiting for the writer thread (``None`` while no handlers are installed)."""
        self._writer: threading.Thread | None = None

    def request_stop(self, reason: str, *, kill: bool = True) -> None:
        """Stop scheduling; with ``kill``, end running agent processes at once."""
        with self._lock:
            if self.killed or (self.stop_requested.is_set() and not kill):
                return
            if not self.stop_requested.is_set():
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

    @contextlib.contextmanager
    def cleaning(self, task_name: str, timeout: float) -> Iterator[None]:
        """Mark a running ``cleanup:`` so a stop can say what it waits for."""
        with self._lock:
            key = next(self._cleanup_ids)
            self._cleanups[key] = (task_name, time.monotonic() + timeout)
            stopping = self.killed and not self.forced
        if stopping:
            self._say(self._waiting_message(task_name, timeout))
        try:
            yield
        finally:
            with self._lock:
                self._cleanups.pop(key, None)

    def drain(self) -> None:
        """After a kill: wait until no attempt is busy, then let the cleanups run."""
        if self.cleanup_allowed.is_set():
            return
        deadline = time.monotonic() + DRAIN_SECONDS
        while time.monotonic() < deadline:
            with self._lock:
                if self._busy == 0:
                    break
            time.sleep(0.05)
        self.cleanup_allowed.set()

    # -- messages ------------------------------------------------------------------------------
    def _again(self) -> str:
        if self.stop_signal in (None, signal.SIGINT):
            return "press Ctrl-C again"
        return f"send {signal_label(self.stop_signal)} again"

    def _waiting_message(self, task_name: str, seconds: float) -> str:
        return (
            f"Stopping: waiting for cleanup of task {task_name!r} (up to "
            f"{math.ceil(max(seconds, 0)):d} s); {self._again()} to cut it short."
        )

    def _say(self, text: str) -> None:
        """Tell the user ``text``: queued for the writer thread while there is one (the only
        thing a signal handler may safely do with it), else written at once."""
        if self._notify is None:
            return
        outbox = self._outbox
        if outbox is not None:
            outbox.put(text)  # SimpleQueue.put is safe inside a signal handler
            return
        self._write(text)

    def _write(self, text: str) -> None:
        assert self._notify is not None
        with contextlib.suppress(Exception):  # a closed terminal (SIGHUP) must not break a stop
            self._notify(text)

    def _write_queued(self, outbox: queue.SimpleQueue[str | None]) -> None:
        """The writer thread: write each queued line until the ``None`` that ends it."""
        while (text := outbox.get()) is not None:
            self._write(text)

    def _start_writer(self) -> None:
        if self._notify is None or self._writer is not None:
            return
        self._outbox = queue.SimpleQueue()
        self._writer = threading.Thread(
            target=self._write_queued,
            args=(self._outbox,),
            name="caliper-stop-messages",
            daemon=True,
        )
        self._writer.start()

    def _stop_writer(self) -> None:
        """Write what is still queued, then end the writer thread."""
        outbox, writer = self._outbox, self._writer
        self._outbox = self._writer = None
        if outbox is None or writer is None:
            return
        outbox.put(None)
        writer.join(timeout=5)

    # -- signals -------------------------------------------------------------------------------
    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        if self.killed:
            # the same request again: the user will not wait, so cut cleanups short too
            self.forced = True
            process.stop_all(force=True)
            self._say("Stopping now: the cleanups still running are being ended.")
            return

        stop_policy.note(signum)
        label = signal_label(signum)
        self.stop_signal = signum
        self.request_stop(f"interrupted ({label})")
        with self._lock:
            running = list(self._cleanups.values())
        self._say(
            f"Stopping ({label}): ending the running attempts; the finished ones will be "
            "saved as a partial run."
        )
        now = time.monotonic()
        for task_name, deadline in running:
            self._say(self._waiting_message(task_name, deadline - now))

    def install_signals(self) -> None:
        """Route SIGINT, SIGTERM and SIGHUP to a stop (main thread only; a no-op elsewhere).

        A signal ignored by whoever started caliper stays ignored.
        """
        if threading.current_thread() is not threading.main_thread():
            return
        self._start_writer()
        for signum in HANDLED_SIGNALS:
            if signal.getsignal(signum) is signal.SIG_IGN:
                continue
            self._previous[signum] = signal.signal(signum, self._on_signal)

    def restore_signals(self) -> None:
        """Put back the handlers that were there before :meth:`install_signals`, once the
        stop messages still queued are written."""
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)  # type: ignore[arg-type]
        self._previous.clear()
        self._stop_writer()
