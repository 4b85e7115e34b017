"""Ending a process and everything it started, adopting orphans, and noticing an exit at once."""

from __future__ import annotations

import contextlib
import ctypes
import math
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from caliper.system.process._registry import (
    KILL_GRACE_SECONDS,
    KILL_ROUNDS,
    PR_GET_CHILD_SUBREAPER,
    PR_SET_CHILD_SUBREAPER,
    _adopting,
    _callers_children,
    _live,
    _live_lock,
    _spawn_lock,
    _spawned,
    _spawning,
    _was_subreaper,
)
from caliper.system.process._table import _Proc, _process_table, _tree, _with_descendants

if TYPE_CHECKING:
    from caliper.system.process import StartedProcess


def _signal_each(pids: Iterable[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def end_descendants(
    root: int, tag: str, *, since: int = 0, known: Mapping[int, int] | None = None
) -> dict[int, _Proc]:
    """Kill (SIGKILL) every live process of the process ``root`` started with marker ``tag``.

    ``since`` is when ``root`` started; ``known`` maps pids found earlier (before their
    parents died) to their start times, so they are killed too unless the pid was reused
    since. Repeats until a scan finds none; returns that last scan.
    """
    known = dict(known or {})
    table: dict[int, _Proc] = {}
    for _ in range(KILL_ROUNDS):
        table = _process_table(since)
        doomed = _tree(root, tag, table, since)
        doomed |= _with_descendants(
            [
                pid
                for pid, started in known.items()
                if pid in table and table[pid].started == started
            ],
            table,
        )
        doomed = {pid for pid in doomed if table[pid].state != "Z" and pid != os.getpid()}
        if not doomed:
            break
        _signal_each(doomed, signal.SIGKILL)
        time.sleep(0.02)
    return table


# -- orphans adopted by caliper ---------------------------------------------------------------
def adopt_orphans() -> bool:
    """Make this process a child subreaper (Linux), so orphaned descendants of the processes
    it starts are re-parented to it instead of init; true when that worked.

    The children this process already has (a library caller's own) are remembered and never
    swept nor reaped; :func:`release_orphans` undoes it when the run is over.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        flag = ctypes.c_int(0)
        was = libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0 and flag.value
        adopted = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
    if adopted and not _adopting.is_set():
        mine = os.getpid()
        with _spawn_lock:
            _callers_children.clear()
            _callers_children.update(
                p.pid for p in _process_table(1 << 62).values() if p.ppid == mine
            )
        _was_subreaper[0] = bool(was)
        _adopting.set()
    return adopted


def release_orphans() -> None:
    """Undo :func:`adopt_orphans` at the end of a run: this process stops being a subreaper
    (unless it was one before) and forgets its callers' children, so a program that ran
    Caliper in-process (``caliper.run``) gets its own process handling back unchanged."""
    if not _adopting.is_set():
        return
    _adopting.clear()
    with _spawn_lock:
        _callers_children.clear()
    if not _was_subreaper[0]:
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def reap_adopted(table: Mapping[int, _Proc] | None = None) -> None:
    """Collect the exit status of adopted orphans that have died (never of our own children).

    ``table`` is a recent process scan to use instead of a new one. Does nothing unless
    :func:`adopt_orphans` made this process a subreaper (so a library caller's own children
    are never touched).
    """
    if not _adopting.is_set():
        return
    mine = os.getpid()
    scan = _process_table(1 << 62) if table is None else table
    with _spawn_lock:
        if _spawning[0]:  # a zombie may be a start's failed child, reaped by its Popen
            return
        for proc in scan.values():
            if (
                proc.ppid == mine
                and proc.state == "Z"
                and proc.pid not in _spawned
                and proc.pid not in _callers_children
            ):
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(proc.pid, os.WNOHANG)


def sweep_orphans(table: Mapping[int, _Proc] | None = None) -> None:
    """Kill every adopted orphan (and its descendants) when no started process is running,
    then reap the dead ones.

    Orphans that kept their marker were already ended with their process; this catches those
    that dropped it. Called after each process and at the end of a run; ``table`` is a recent
    process scan to start from. Does nothing unless :func:`adopt_orphans` made this process a
    subreaper.
    """
    if not _adopting.is_set():
        return
    with _live_lock:
        if _live:
            reap_adopted(table)
            return
    mine = os.getpid()
    scan = _process_table(1 << 62) if table is None else table
    for _ in range(KILL_ROUNDS):
        with _spawn_lock:
            adopted = [
                p.pid
                for p in scan.values()
                if not _spawning[0]  # a child not in _spawned yet may be one being started
                and p.ppid == mine
                and p.pid not in _spawned
                and p.pid not in _callers_children
                and p.state != "Z"
            ]
        doomed = {pid for pid in _with_descendants(adopted, scan) if scan[pid].state != "Z"}
        if not doomed:
            break
        _signal_each(doomed, signal.SIGKILL)
        time.sleep(0.02)
        scan = _process_table(1 << 62)
    reap_adopted(scan)


# -- noticing an exit at once -----------------------------------------------------------------


class _ExitWatch:
    """Waits for one child to exit and notices it at once.

    Where the kernel has pidfds (Linux 5.3+), the wait is a ``poll`` on the child's pidfd,
    which becomes readable the moment it exits. Elsewhere a reaper thread blocks in
    ``Popen.wait()`` and sets an event. (``Popen.wait(timeout=…)`` is a sleep loop that
    doubles up to 50 ms, so a child exiting after 35 ms would be seen only at ~64 ms.)
    """

    def __init__(self, process: StartedProcess):
        self._process = process
        self._pidfd: int | None = None
        self._poll: select.poll | None = None
        self._done: threading.Event | None = None
        if _PIDFD:
            try:
                self._pidfd = os.pidfd_open(process.pid)
            except OSError:  # e.g. an old kernel, or seccomp forbids it
                self._pidfd = None
        if self._pidfd is not None:
            self._poll = select.poll()
            self._poll.register(self._pidfd, select.POLLIN)
        else:
            self._done = threading.Event()
            threading.Thread(target=self._reap, name="caliper-reaper", daemon=True).start()

    def _reap(self) -> None:
        with contextlib.suppress(Exception):
            self._process.wait()
        assert self._done is not None
        self._done.set()

    def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for the exit; true once the child has exited (and is reaped)."""
        if self._poll is not None:
            try:
                ready = self._poll.poll(max(0, math.ceil(seconds * 1000)))
            except InterruptedError:  # pragma: no cover - PEP 475 retries; kept for safety
                ready = []
            if not ready:
                return self._process.poll() is not None
            self._process.wait()
            return True
        assert self._done is not None
        return self._done.wait(seconds)

    def close(self) -> None:
        """Release the pidfd (the reaper thread ends with the child)."""
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None
            self._poll = None


_PIDFD = hasattr(os, "pidfd_open") and sys.platform.startswith("linux")


# -- one process ------------------------------------------------------------------------------
def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _terminate(process: StartedProcess, tag: str, since: int) -> dict[int, _Proc]:
    """End the process, its group and every descendant (see the module docstring); returns
    the last process scan."""
    pgid = process.pid
    table = _process_table(since)
    known = {pid: table[pid].started for pid in _tree(pgid, tag, table, since)}
    if not known and process.poll() is not None and not _group_alive(pgid):
        # it exited, its group is empty and no live process carries its marker or descends
        # from one that does: nothing is left that could start another, so nothing to end
        with _spawn_lock:
            _spawned.discard(process.pid)
        return table
    _kill_group(pgid, signal.SIGTERM)
    _signal_each(known, signal.SIGTERM)
    deadline = time.monotonic() + KILL_GRACE_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None and not _group_alive(pgid):
            break
        time.sleep(0.05)
    _kill_group(pgid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=KILL_GRACE_SECONDS)
    with _spawn_lock:
        if process.returncode is not None:
            _spawned.discard(process.pid)
    return end_descendants(pgid, tag, since=since, known=known)
