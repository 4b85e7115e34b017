"""What the process layer shares: its settings and the state of the processes it started.

Every container here is mutated in place, never rebound, so the modules of
:mod:`caliper.system.process` share one state by importing the names.
"""

from __future__ import annotations

import contextlib
import itertools
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

DEFAULT_OUTPUT_LIMIT = 64 * 1024 * 1024
KILL_GRACE_SECONDS = 2.0
TAG_VARIABLE = "CALIPER_PROCESS_TAG"
"""Environment marker of one started process, inherited by all its descendants."""
KILL_ROUNDS = 20
PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
PROC = Path("/proc")

_live: dict[int, bool] = {}
"""pid (= process group) of each running process -> whether it survives a first stop."""
_live_lock = threading.RLock()  # re-entrant: stop_all runs from signal handlers
_spawned: set[int] = set()
"""pids started here and not yet reaped by their Popen (never reaped by the orphan sweep)."""
_spawn_lock = threading.Lock()
"""Guards ``_spawned``, ``_spawning``, ``_starts`` and ``_callers_children``; held only to
read or change them, never while a process starts (so starts run side by side)."""
_spawning = [0]
"""Starts under way: each one's child may exist before its pid is in ``_spawned``, so while
this is not 0 no child of ours that is missing from ``_spawned`` is taken for an orphan."""
_starts = [0]
"""How many processes :func:`run_process` has started (counted under ``_spawn_lock``)."""


def registered_start(start: Callable[[], T], *, counted: bool = True) -> T:
    """Call ``start`` (which starts one process and returns it, with its ``pid``) as a start
    under way, then add the pid to ``_spawned`` (and to the count when ``counted``).

    The lock is not held while the process starts; :data:`_spawning` tells the orphan sweep
    that a child it cannot place yet may be one being started."""
    with _spawn_lock:
        _spawning[0] += 1
    started = None
    try:
        started = start()
        return started
    finally:
        with _spawn_lock:
            _spawning[0] -= 1
            if started is not None:
                _spawned.add(started.pid)  # type: ignore[attr-defined]
                if counted:
                    _starts[0] += 1


_stopping = threading.Event()
_forced = threading.Event()
_tags = itertools.count(1)
_after_start = threading.local()


@contextlib.contextmanager
def after_start(callback: Callable[[], None]) -> Iterator[None]:
    """Call ``callback`` once, as soon as the first process this thread starts inside the
    block is running (not at all when none starts).

    The attempt pipeline makes the next attempt's sandbox then, so that work overlaps the
    agent's run instead of its start.
    """
    _after_start.callback = callback
    try:
        yield
    finally:
        _after_start.callback = None


def _started() -> None:
    callback = getattr(_after_start, "callback", None)
    if callback is not None:
        _after_start.callback = None
        with contextlib.suppress(Exception):  # never the process's concern
            callback()


_adopting = threading.Event()
_callers_children: set[int] = set()
"""Children this process had when it became a subreaper: a library caller's own, never ours."""
_was_subreaper = [False]
"""Set once this process is a child subreaper (:func:`adopt_orphans`): only then does it end
and reap children that ``run_process`` did not start (they are adopted orphans)."""

STOP_CHECK_SECONDS = 0.1
"""How often a waiting process checks for a stop request (an exit is noticed at once)."""
