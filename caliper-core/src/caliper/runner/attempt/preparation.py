"""Making the next attempt's sandbox while the current attempt's agent runs.

Everything the harness does between two agent starts of one worker is on the critical path.
What does not depend on the previous attempt (a fresh sandbox, the skill install, the MCP
translation, the backend's HOME seeding, the judge call's own sandbox) is made *ahead*: when
an attempt's agent is about to start, a :class:`Preparer` thread makes a :class:`ReadyAttempt`
for the worker's next attempt, and that attempt takes it instead of making one.

The rules it keeps:

* bounded: at most one ready-but-not-started attempt per worker thread, never a backlog;
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
import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from caliper.plugin.sandbox import make_sandbox, remove_sandbox

if TYPE_CHECKING:
    from caliper.plugin.attempt import AttemptSandbox, InstalledSkill, NativeMcpConfig
    from caliper.plugin.backend import Backend
    from caliper.runner.run.prepare import PreparedRun
    from caliper.spec.model import Task

Fingerprint = tuple[tuple[str, int, int, int, int, int], ...]


def new_sandbox(prepared: PreparedRun, parent: AttemptSandbox | None = None) -> AttemptSandbox:
    """A fresh attempt sandbox of ``prepared``'s run, or a judge call's nested in ``parent``."""
    return make_sandbox(
        spec_dir=prepared.spec.directory,
        extra_path=prepared.spec.sandbox.extra_path,
        parent=parent.root if parent else prepared.sandbox_parent,
        prefix="judge-" if parent else "caliper-attempt-",
    )


def seed_ahead(backend: Backend, sandbox: AttemptSandbox) -> AttemptSandbox:
    """``sandbox`` with ``backend``'s HOME seeding done (:meth:`Backend.prepare_home`)."""
    from caliper.plugin.attempt import SeededHome

    state = backend.prepare_home(sandbox)
    return attrs.evolve(sandbox, seeded=SeededHome(backend.id, state))


def fingerprint(root: Path) -> Fingerprint:
    """Every entry under ``root`` (and ``root`` itself) with its inode, mode, size and change
    time: any file written, added, removed or replaced below changes it."""
    entries: list[tuple[str, int, int, int, int, int]] = []

    def note(path: str, st: os.stat_result) -> None:
        entries.append((path, st.st_ino, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns))

    note(str(root), os.lstat(root))
    pending = [str(root)]
    while pending:
        folder = pending.pop()
        with os.scandir(folder) as listing:
            for entry in listing:
                note(entry.path, entry.stat(follow_symlinks=False))
                if entry.is_dir(follow_symlinks=False):
                    pending.append(entry.path)
    return tuple(sorted(entries))


@attrs.define
class ReadyJudge:
    """A judge call's sandbox made ahead, and what it looked like once made."""

    sandbox: AttemptSandbox
    made: Fingerprint

    def untouched(self) -> bool:
        """Whether nothing in it changed since it was made (the agent ran beside it)."""
        try:
            return fingerprint(self.sandbox.root) == self.made
        except OSError:
            return False


@attrs.define
class Installed:
    """What the skill install and the MCP translation gave one sandbox (``failure``: why
    preparing it failed, recorded as the attempt's infra error)."""

    skills: list[InstalledSkill] = attrs.field(factory=list)
    native_mcp: NativeMcpConfig | None = None
    failure: str | None = None


def install_into(prepared: PreparedRun, sandbox: AttemptSandbox) -> Installed:
    """Install the run's skills and translate its MCP servers into ``sandbox``; a plugin
    that raises is a failure reason, not an exception."""
    try:
        skills = (
            prepared.installer.install(prepared.installed_skills, sandbox)
            if prepared.installer is not None and prepared.installed_skills
            else []
        )
        native_mcp = (
            prepared.translator.translate(prepared.mcp.servers, sandbox)
            if prepared.translator is not None and prepared.mcp.servers
            else None
        )
    except Exception as exc:  # a plugin failing to prepare the sandbox is a harness error
        return Installed(failure=f"preparing the sandbox failed: {type(exc).__name__}: {exc}")
    return Installed(skills=list(skills), native_mcp=native_mcp)


@attrs.define
class ReadyAttempt:
    """An attempt sandbox made ahead for one engine's run.

    ``installed`` is ``None`` for a bare sandbox (made for a task with ``setup:``, which runs
    before the install); otherwise the install is done and, when it succeeded, the backend's
    HOME seeding too. ``judge`` is a judge call's sandbox made ahead, nested in this one.
    """

    engine_key: str
    sandbox: AttemptSandbox
    installed: Installed | None = None
    judge: ReadyJudge | None = None

    def discard(self) -> None:
        """Remove it (in the background, like every attempt sandbox)."""
        remove_sandbox(self.sandbox, later=True)


def make_ready(
    prepared: PreparedRun,
    engine_key: str,
    *,
    install: bool,
    judge_backend: Backend | None,
    with_judge: bool,
) -> ReadyAttempt:
    """Make an attempt sandbox ahead: bare, or (``install``) with the skills, the MCP config
    and the backend's HOME seeding; with ``with_judge`` also a judge call's sandbox inside it
    (seeded by ``judge_backend`` when the judge engine is known already)."""
    sandbox = new_sandbox(prepared)
    try:
        installed = None
        if install:
            installed = install_into(prepared, sandbox)
            if installed.failure is None:
                sandbox = seed_ahead(prepared.engine.backend, sandbox)
        judge = None
        if with_judge:
            box = new_sandbox(prepared, parent=sandbox)
            if judge_backend is not None:
                box = seed_ahead(judge_backend, box)
            judge = ReadyJudge(box, fingerprint(box.root))
    except BaseException:
        remove_sandbox(sandbox, later=True)
        raise
    return ReadyAttempt(engine_key, sandbox, installed, judge)


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

    def ahead(self, engine_key: str, install: bool, make: Callable[[], ReadyAttempt]) -> None:
        """Start making the calling worker's next attempt with ``make`` (on the preparer's
        thread) for ``engine_key`` (``install``: with the install done), unless one is made
        already or the run is stopping or over."""
        ident = threading.get_ident()
        with self._lock:
            if self._closed or ident in self._slots or self._stop.is_set():
                return
            self._slots[ident] = _Slot(engine_key, install, self._pool.submit(_made_or_none, make))

    def take(self, engine_key: str, task: Task) -> ReadyAttempt | None:
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
            ready.discard()
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


@attrs.frozen
class _Slot:
    """One worker's attempt being made (or made) ahead, and what it is made for."""

    engine_key: str
    install: bool
    future: concurrent.futures.Future[ReadyAttempt | None]


def _discard(future: concurrent.futures.Future[ReadyAttempt | None]) -> None:
    """Remove the attempt ``future`` made (waiting until it is made)."""
    ready = future.result()
    if ready is not None:
        ready.discard()


def _made_or_none(make: Callable[[], ReadyAttempt]) -> ReadyAttempt | None:
    """``make()``, or ``None`` when it failed (the attempt then makes its own sandbox and
    meets the same error where it is reported today)."""
    try:
        return make()
    except Exception:
        return None


@contextlib.contextmanager
def judge_sandbox(
    prepared: PreparedRun, attempt: AttemptSandbox, ready: list[ReadyJudge]
) -> Iterator[AttemptSandbox]:
    """A sandbox for one judge call, removed after: the one made ahead (``ready``, taken
    once) when nothing in it changed, else a fresh one nested in the attempt's root."""
    sandbox = None
    if ready:
        made = ready.pop()
        if made.untouched():
            sandbox = made.sandbox
        else:
            remove_sandbox(made.sandbox, later=True)
    if sandbox is None:
        sandbox = new_sandbox(prepared, parent=attempt)
    try:
        yield sandbox
    finally:
        remove_sandbox(sandbox, later=True)
