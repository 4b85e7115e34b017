"""Making the next attempt's sandbox while the current attempt's agent runs.

Everything the harness does between two agent starts of one worker is on the critical path.
What does not depend on the previous attempt (a fresh sandbox, the skill install, the MCP
translation, the backend's HOME seeding, the judge call's own sandbox) is made *ahead*: when
an attempt's agent is about to start, a :class:`Preparer` thread makes a fresh
:class:`~caliper.runner.attempt.environment.AttemptEnvironment` for the worker's next attempt
and runs its first steps; that attempt takes it instead of making one, and its steps already
done return what they gave then.

The rules it keeps:

* bounded: at most one ready-but-not-started attempt per worker thread, never a backlog, and
  none once every attempt the run will hand out has begun (:meth:`Preparer.expect`: the last
  attempts of a run, and the only one of a k=1 run, make no spare);
* no user code: a task's ``setup:`` still runs first in its own attempt, so for a task with
  ``setup:`` only the bare sandbox (``home``, ``work``, ``tmp``, what setup sees today) is
  made ahead, and a fully prepared one is never handed to it;
* nothing left behind: a ready attempt that never runs (the run ended, a stop, another
  engine's job came next) is removed (:meth:`Preparer.close` at the end of every run);
* a judge call's sandbox made ahead is used only when nothing in it changed since it was
  made (the agent ran beside it), else a fresh one is made as before.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.runner.attempt.environment import AttemptEnvironment
    from caliper.spec.model import Task


class Preparer:
    """Makes each worker thread's next attempt ahead, at most one per worker (thread-safe).

    A worker calls :meth:`ahead` as its attempt's agent is about to start and :meth:`take`
    when its next attempt begins; :meth:`close` (once, when the run's attempts are done)
    removes whatever was made and never taken.
    """

    def __init__(self, workers: int, stop: threading.Event) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=max(1, workers), thread_name_prefix="caliper-prepare"
        )
        self._stop = stop
        self._lock = threading.Lock()
        self._slots: dict[int, _Slot] = {}
        self._closed = False
        self._expected: int | None = None
        self._begun = 0

    def expect(self, attempts: int | None) -> None:
        """How many attempts the run will hand out (``None``: not known ahead, e.g. ``--k
        auto``); once that many have begun, no next attempt is made ahead."""
        with self._lock:
            self._expected = attempts

    def begun(self) -> None:
        """One more of the run's attempts has begun (called once for each, before it starts)."""
        with self._lock:
            self._begun += 1

    def ahead(self, engine_key: str, install: bool, make: Callable[[], AttemptEnvironment]) -> None:
        """Start making the calling worker's next attempt with ``make`` (on the preparer's
        thread) for ``engine_key`` (``install``: with the install done), unless one is made
        already or the run is stopping or over."""
        ident = threading.get_ident()
        with self._lock:
            if self._closed or ident in self._slots or self._stop.is_set():
                return
            if self._expected is not None and self._begun >= self._expected:
                return  # no attempt is left to take it
            self._slots[ident] = _Slot(engine_key, install, self._pool.submit(_made_or_none, make))

    def take(self, engine_key: str, task: Task) -> AttemptEnvironment | None:
        """The calling worker's attempt made ahead, when it fits ``task`` on ``engine_key``:
        the same engine, and never one with the install done for a task whose ``setup:``
        must run first. One that does not fit is removed (without waiting for it)."""
        with self._lock:
            slot = self._slots.pop(threading.get_ident(), None)
        if slot is None:
            return None
        if slot.engine_key != engine_key or (task.setup and slot.install):
            slot.future.add_done_callback(_discard)
            return None
        ready = slot.future.result()
        if ready is not None and self._stop.is_set():
            ready.cleanup()
            return None
        return ready

    def close(self) -> None:
        """Remove every attempt made and not taken, and end the preparer's threads."""
        with self._lock:
            self._closed = True
            slots = list(self._slots.values())
            self._slots.clear()
        for slot in slots:
            _discard(slot.future)
        self._pool.shutdown(wait=True)


@attrs_classes.frozen
class _Slot:
    """One worker's attempt being made (or made) ahead, and what it is made for."""

    engine_key: str
    install: bool
    future: concurrent.futures.Future[AttemptEnvironment | None]


def _discard(future: concurrent.futures.Future[AttemptEnvironment | None]) -> None:
    """Remove the attempt ``future`` made (waiting until it is made)."""
    ready = future.result()
    if ready is not None:
        ready.cleanup()


def _made_or_none(make: Callable[[], AttemptEnvironment]) -> AttemptEnvironment | None:
    """``make()``, or ``None`` when it failed (the attempt then makes its own sandbox and
    meets the same error where it is reported today)."""
    try:
        return make()
    except Exception:
        return None
