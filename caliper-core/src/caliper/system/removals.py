"""Deleting folder trees in the background, several at a time.

A run deletes each attempt's sandbox once the attempt is done, and the next attempt need not
wait for it. Deleting is mostly waiting on the disk (on ext4 without a journal, mounted with
``discard``, each freed block is discarded before ``rmdir``/``unlink`` returns), so one
thread falls behind a run of several workers and the run then waits at its end for the
backlog. :class:`BackgroundRemovals` keeps up to :data:`MAX_REMOVERS` threads, starting
another only while every running one is busy. Two trees where one holds the other (a judge
call's sandbox nests in its attempt's) are never deleted at the same time: the later one
waits until the other is gone.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

MAX_REMOVERS = 4
"""Most threads deleting at once."""
LINGER_SECONDS = 0.05
"""How long an idle thread waits for the next tree before it ends: attempts come every few
milliseconds, and starting a thread for each would be on the attempt's path."""


def _related(one: str, other: str) -> bool:
    """Whether one of the two paths is the other or lies inside it."""
    return (
        one == other or one.startswith(other.rstrip(os.sep) + os.sep)
        or other.startswith(one.rstrip(os.sep) + os.sep)
    )  # fmt: skip


class BackgroundRemovals:
    """A queue of trees to delete, drained by up to :data:`MAX_REMOVERS` threads.

    ``remove`` deletes one tree; what it raises is ignored (a tree left behind is the
    ledger's to clean, :mod:`caliper.system.ledger`). The threads are not daemons, so the
    process never exits before the queue is empty.
    """

    def __init__(self, remove: Callable[[Path], None], *, name: str) -> None:
        self._remove = remove
        self._name = name
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)
        """Where idle threads wait: one is woken per tree queued, all when the run finished."""
        self._settled = threading.Condition(self._lock)
        """Notified when a deletion ends and something may be waiting for it: a queued tree
        related to it, or :meth:`wait` (nothing queued or being deleted)."""
        self._queued: list[Path] = []
        self._busy: set[str] = set()
        """The trees being deleted now."""
        self._threads = 0
        self._idle = 0
        """Threads waiting on :attr:`_work`."""
        self._blocked = 0
        """Threads waiting on :attr:`_settled` for a related deletion to end."""
        self._finished = False

    def add(self, root: Path) -> None:
        """Queue ``root`` for deletion."""
        start = False
        with self._lock:
            self._queued.append(root)
            self._finished = False
            if self._idle:
                self._work.notify()
            elif self._blocked:  # a thread waiting behind a related deletion may take this
                self._settled.notify_all()
            elif self._threads == len(self._busy) and self._threads < MAX_REMOVERS:
                self._threads += 1
                start = True
            # else a thread that is not deleting looks at the queue before it waits again
        if start:
            threading.Thread(target=self._drain, name=self._name).start()

    def wait(self) -> None:
        """Block until every queued tree is deleted, then let the idle threads end at once."""
        with self._lock:
            while self._queued or self._busy:
                self._settled.wait()
            self._finished = True
            self._work.notify_all()

    def _next(self) -> Path | None:
        """The first queued tree that holds, and lies in, no tree being deleted (removed
        from the queue); called with the lock held."""
        for index, root in enumerate(self._queued):
            text = str(root)
            if not any(_related(text, busy) for busy in self._busy):
                del self._queued[index]
                return root
        return None

    def _take(self) -> Path | None:
        """The next tree this thread deletes, or ``None`` when it should end: nothing was
        queued for :data:`LINGER_SECONDS` (other threads' deletions ending do not cut the
        wait short), or the run finished. What is queued behind a related deletion waits
        for it. Called with the lock held."""
        deadline: float | None = None
        while True:
            root = self._next()
            if root is not None:
                return root
            if self._queued:  # each waits for a related deletion to end
                self._blocked += 1
                try:
                    self._settled.wait()
                finally:
                    self._blocked -= 1
                continue
            if self._finished:
                return None
            now = time.monotonic()
            if deadline is None:
                deadline = now + LINGER_SECONDS
            elif now >= deadline:
                return None
            self._idle += 1
            try:
                self._work.wait(deadline - now)
            finally:
                self._idle -= 1

    def _drain(self) -> None:
        while True:
            with self._lock:
                root = self._take()
                if root is None:
                    self._threads -= 1
                    return
                self._busy.add(str(root))
            try:
                with contextlib.suppress(Exception):  # what is left is the ledger's to clean
                    self._remove(root)
            finally:
                with self._lock:
                    self._busy.discard(str(root))
                    if self._queued or not self._busy:
                        self._settled.notify_all()
