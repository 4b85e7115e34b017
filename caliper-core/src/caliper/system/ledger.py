"""One ledger of what a caliper process made, so a killed one's leftovers can be removed.

Every sandbox (attempt, judge, made-ahead), every private file (mode 0600: generated configs
holding resolved ``${VAR}`` secrets, copied logins) and every agent process is noted here
*before* it is made (a process: its environment marker before it starts, its pid and start
time once it runs). The ledger is ``<sandbox parent>/.caliper-ledger-<uid>/<pid>-<token>.ledger``
(``<sandbox parent>`` is ``$CALIPER_TMPDIR`` or the system temp folder; the folder is 0700 and
must be the user's own), JSON lines, each written with one ``write`` (so a ``SIGKILL`` loses
none) and flushed to disk by a background thread (one ``fsync`` for all lines written
meanwhile). Sandbox folders carry the ledger's token in their name.

While its process lives the ledger is held with an exclusive ``flock`` (the kernel drops it
when the process dies, however it dies), so a live process's ledger is never cleaned by
another. At a normal end, once everything it names is gone, the ledger is removed; a process
that goes on after a run (a Ray worker, a program calling ``caliper.api.run``) ends the
services the run started and releases its ledger at the run's end (:func:`release_idle`).

:func:`clean_dead` (the start of every run, and ``caliper clean``) takes each ledger nobody
holds, ends the processes it names that are provably the same ones (same pid *and* start
time, or carrying its environment marker, and their descendants; a recycled pid is never
touched), deletes its private files and its sandboxes, and removes the ledger. It says what it
removed as counts (:class:`Cleaned`).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs

from caliper.system import attrs_classes
from caliper.system.process._table import _full_table, _start_time, _with_descendants
from caliper.system.temp_root import TMPDIR_VARIABLE, remove_tree, sandbox_parent

FOLDER_PREFIX = ".caliper-ledger-"
SUFFIX = ".ledger"
FORMAT_KEY = "caliper_ledger"
NEW_PREFIX = ".new-"
NEW_GRACE_SECONDS = 60.0
"""A ledger still being created (its temporary name) is left alone this long."""
FLUSH_PAUSE_SECONDS = 0.02
"""The flusher's pause after each ``fsync``: lines written meanwhile share the next one, so
a busy run does not keep the disk flushing (and its writes waiting on the flush) all the
time. A killed caliper loses no line either way (each is written at once); only a machine
crash can, and only those of the last pause."""
CLOSE_FLUSH_SECONDS = 5.0
"""How long closing a ledger waits for an ``fsync`` under way to end."""


class LedgerUnsafe(OSError):
    """The ledger folder is not the user's own private folder (nothing is recorded there)."""


_locations: dict[str | None, Path] = {}


def location() -> Path:
    """Where this process's sandboxes go: ``$CALIPER_TMPDIR`` (created) or the system temp
    folder, as an absolute path (found once per value of the variable)."""
    key = os.environ.get(TMPDIR_VARIABLE) or None
    found = _locations.get(key)
    if found is None:
        found = (sandbox_parent() or Path(tempfile.gettempdir())).absolute()
        _locations[key] = found
    return found


def ledger_folder(base: Path) -> Path:
    """The ledgers' folder under the sandbox parent ``base``."""
    return base / f"{FOLDER_PREFIX}{os.getuid()}"


def _private_folder(folder: Path, *, create: bool) -> bool:
    """Make sure ``folder`` is a real folder owned by this user with mode 0700; false when it
    does not exist (and ``create`` is false). Raises :class:`LedgerUnsafe` for anything else."""
    if create:
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700, parents=True)
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise LedgerUnsafe(f"{folder} is not a folder of this user's own")
    if info.st_mode & 0o077:
        os.chmod(folder, 0o700)
    return True


def _start_ticks(pid: int) -> int:
    return _start_time(pid)


class Ledger:
    """One process's open ledger in one sandbox parent (see the module docstring)."""

    def __init__(self, path: Path, fd: int, token: str) -> None:
        self.path = path
        self.token = token
        self._fd: int | None = fd
        self._lock = threading.Lock()
        self._dirty = False
        self._wake = threading.Event()
        """Set when a line was written or the ledger closed: wakes the flusher."""
        self._closed = threading.Event()
        """Set when the ledger is closed: cuts the flusher's pause short."""
        self._flusher: threading.Thread | None = None
        self._live: set[Path] = set()
        """The sandboxes this ledger noted that were not removed yet."""

    @classmethod
    def create(cls, base: Path) -> Ledger:
        """Create, lock and name a new ledger under ``base`` (atomically: a ledger is only
        visible under its final name once it is locked)."""
        folder = ledger_folder(base)
        token = os.urandom(4).hex()
        temp = folder / f"{NEW_PREFIX}{os.getpid()}-{token}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC
        for _ in range(10):
            _private_folder(folder, create=True)
            try:
                fd = os.open(temp, flags, 0o600)
                break
            except FileNotFoundError:
                continue  # another process removed the folder as its last ledger ended
        else:
            raise FileNotFoundError(f"cannot keep the ledger folder {folder}")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            pid = os.getpid()
            head = {FORMAT_KEY: 1, "pid": pid, "start": _start_ticks(pid), "token": token}
            os.write(fd, (json.dumps(head) + "\n").encode())
            final = folder / f"{pid}-{token}{SUFFIX}"
            os.rename(temp, final)
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
        ledger = cls(final, fd, token)
        ledger.note({"opened": True})  # flushed in the background, like every line
        return ledger

    def note(self, item: dict[str, object]) -> bool:
        """Write one line now (one ``write``; false when the ledger is closed); it reaches the
        disk in the background (:meth:`_flush_loop`)."""
        data = (json.dumps(item) + "\n").encode()
        with self._lock:
            if self._fd is None:
                return False
            os.write(self._fd, data)
            self._dirty = True
            if self._flusher is None:  # once per ledger: its first line
                self._flusher = threading.Thread(
                    target=self._flush_loop, name="caliper-ledger-flush", daemon=True
                )
                self._flusher.start()
        self._wake.set()
        return True

    def _flush_loop(self) -> None:
        """The ledger's one flusher, from its first line until it is closed: each time it is
        woken, one ``fsync`` for every line written since the last one, then a pause of
        :data:`FLUSH_PAUSE_SECONDS`. (Woken by an event, not started per line, so noting a
        line does not wait for a thread to start.)"""
        while True:
            self._wake.wait()
            self._wake.clear()
            with self._lock:
                if self._fd is None:
                    return
                if not self._dirty:
                    continue
                self._dirty = False
                fd = self._fd
            with contextlib.suppress(OSError):
                os.fsync(fd)
            self._closed.wait(FLUSH_PAUSE_SECONDS)

    def sandbox_root(self, parent: Path, prefix: str) -> Path | None:
        """Note, then make, a new sandbox folder in ``parent`` (mode 0700, a fresh name that
        carries this ledger's token); ``None`` when this ledger was closed meanwhile."""
        for _ in range(100):
            root = parent / f"{prefix}{self.token}-{os.urandom(4).hex()}"
            if not self.note({"sandbox": str(root)}):
                return None
            try:
                os.mkdir(root, 0o700)
            except FileExistsError:
                continue
            with self._lock:
                self._live.add(root)
            return root
        raise FileExistsError(f"no free sandbox name in {parent}")

    def removed(self, root: Path) -> None:
        """``root`` (a sandbox of this ledger) was deleted."""
        with self._lock:
            self._live.discard(root)

    def idle(self) -> bool:
        """True when every sandbox this ledger noted is gone from disk."""
        with self._lock:
            live = list(self._live)
        return not any(os.path.lexists(root) for root in live)

    def close(self) -> None:
        """At a normal end: remove the ledger when nothing it names is left, and let go."""
        with self._lock:
            fd, self._fd = self._fd, None
            flusher = self._flusher
        if fd is None:
            return
        self._closed.set()
        self._wake.set()
        if flusher is not None and flusher is not threading.current_thread():
            flusher.join(CLOSE_FLUSH_SECONDS)  # its last fsync, before the descriptor goes
        try:
            if self.idle():
                with contextlib.suppress(OSError):
                    self.path.unlink()
                with contextlib.suppress(OSError):
                    self.path.parent.rmdir()  # only when no other ledger is in it
        finally:
            os.close(fd)


_ledgers: dict[Path, Ledger] = {}
_guard = threading.Lock()
_disabled: set[Path] = set()
_at_release: list[Callable[[], None]] = []


def _close_all() -> None:
    with _guard:
        ledgers = list(_ledgers.values())
        _ledgers.clear()
    for ledger in ledgers:
        with contextlib.suppress(OSError):
            ledger.close()


def current(base: Path | None = None) -> Ledger | None:
    """This process's ledger in ``base`` (default: :func:`location`), created on first use;
    ``None`` when the ledger folder cannot be used (not the user's own)."""
    base = base or location()
    with _guard:
        found = _ledgers.get(base)
        if found is not None or base in _disabled:
            return found
        try:
            found = Ledger.create(base)
        except LedgerUnsafe:
            _disabled.add(base)
            return None
        if not _ledgers:
            atexit.register(_close_all)
        _ledgers[base] = found
        return found


def stop_at_release(stop: Callable[[], None]) -> None:
    """Have the next :func:`release_idle` call ``stop`` first: a service that outlives one
    attempt (the warm ``assert:`` server, whose folder is a sandbox of this ledger) ends with
    the run that started it, so its folder goes and the ledger can be released. The service
    registers again when it is started again."""
    with _guard:
        if stop not in _at_release:
            _at_release.append(stop)


def release_idle() -> None:
    """The end of a run (or of a job on a node) in a process that goes on: end the services
    registered with :func:`stop_at_release`, then close (and remove) each ledger of this
    process whose sandboxes are all gone (the next sandbox opens a new ledger)."""
    with _guard:
        stops = list(_at_release)
        _at_release.clear()
    for stop in stops:
        with contextlib.suppress(Exception):  # a service that cannot stop leaves its ledger
            stop()
    with _guard:
        idle = [(base, ledger) for base, ledger in _ledgers.items() if ledger.idle()]
        for base, _ in idle:
            del _ledgers[base]
    for _, ledger in idle:
        with contextlib.suppress(OSError):
            ledger.close()


def open_ledgers() -> list[Ledger]:
    """The ledgers this process has open (processes are noted in each)."""
    with _guard:
        return list(_ledgers.values())


def new_sandbox_root(parent: Path | None, prefix: str) -> Path:
    """A new sandbox folder in ``parent`` (default: the sandbox parent), noted in the ledger
    before it is made."""
    base = location()
    target = parent or base
    for _ in range(3):
        ledger = current(base)
        if ledger is None:
            break
        root = ledger.sandbox_root(target, prefix)
        if root is not None:
            return root
        with _guard:  # closed by release_idle meanwhile: the next one is opened
            if _ledgers.get(base) is ledger:
                del _ledgers[base]
    return Path(tempfile.mkdtemp(prefix=prefix, dir=target))


def sandbox_removed(root: Path) -> None:
    """A sandbox folder was deleted (each open ledger forgets it)."""
    for ledger in open_ledgers():
        ledger.removed(root)


def note_private(path: Path) -> None:
    """Note a private file (0600) before it is written."""
    for ledger in open_ledgers():
        ledger.note({"private": str(path)})


def note_process_tag(tag: str) -> None:
    """Note the environment marker of a process about to start."""
    for ledger in open_ledgers():
        ledger.note({"tag": tag})


def note_process(pid: int, started: int, tag: str | None) -> None:
    """Note a started process: its pid and start time (clock ticks since boot)."""
    for ledger in open_ledgers():
        ledger.note({"pid": pid, "start": started, "tag": tag})


# -- cleaning a dead process's leftovers ------------------------------------------------------
@attrs_classes.define
class Cleaned:
    """What :func:`clean_dead` removed."""

    runs: int = 0
    sandboxes: int = 0
    private_files: int = 0
    processes: int = 0
    problems: list[str] = attrs.field(factory=list)

    def lines(self) -> list[str]:
        """One line per kind of thing removed (nothing when nothing was)."""
        if not self.runs:
            return [*self.problems]
        runs = "a killed caliper run" if self.runs == 1 else f"{self.runs} killed caliper runs"
        found = [
            f"Ended {_count(self.processes, 'agent process', 'agent processes')} left running "
            f"by {runs}."
            if self.processes
            else "",
            f"Removed {_count(self.private_files, 'private file')} (generated configs with "
            f"resolved secrets, copied logins) left by {runs}."
            if self.private_files
            else "",
            f"Removed {_count(self.sandboxes, 'sandbox folder')} left by {runs}."
            if self.sandboxes
            else "",
        ]
        return [line for line in found if line] + self.problems


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


@attrs_classes.frozen
class _Entries:
    pid: int
    start: int
    token: str
    sandboxes: list[Path]
    private: list[Path]
    tags: set[str]
    processes: set[tuple[int, int]]


def _read_entries(fd: int) -> _Entries | None:
    chunks = []
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    lines = b"".join(chunks).split(b"\n")
    try:
        head = json.loads(lines[0])
        token = str(head["token"])
        pid, start = int(head["pid"]), int(head["start"])
    except (ValueError, KeyError, TypeError, IndexError):
        return None
    sandboxes: list[Path] = []
    private: list[Path] = []
    tags: set[str] = set()
    processes: set[tuple[int, int]] = set()
    for raw in lines[1:]:
        try:
            item = json.loads(raw)
        except ValueError:
            continue  # a torn last line
        if not isinstance(item, dict):
            continue
        with contextlib.suppress(TypeError, ValueError):
            if isinstance(item.get("sandbox"), str):
                sandboxes.append(Path(item["sandbox"]))
            elif isinstance(item.get("private"), str):
                private.append(Path(item["private"]))
            elif "pid" in item:
                processes.add((int(item["pid"]), int(item["start"])))
                if isinstance(item.get("tag"), str):
                    tags.add(item["tag"])
            elif isinstance(item.get("tag"), str):
                tags.add(item["tag"])
    return _Entries(pid, start, token, sandboxes, private, tags, processes)


def _end_processes(entries: _Entries) -> int:
    """SIGKILL the live processes that are provably the dead run's; how many were ended."""
    ended: set[int] = set()
    mine = os.getpid()
    for _ in range(20):
        table = _full_table(newer_than=entries.start)
        roots = [
            proc.pid
            for proc in table.values()
            if (proc.pid, proc.started) in entries.processes
            or (proc.tag is not None and proc.tag in entries.tags)
        ]
        doomed = {
            pid
            for pid in _with_descendants(roots, table)
            if pid != mine and table[pid].state != "Z" and table[pid].started >= entries.start
        }
        if not doomed:
            break
        for pid in doomed:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        ended |= doomed
        time.sleep(0.02)
    return len(ended)


def _ours(root: Path, token: str) -> bool:
    """True for a sandbox folder the dead run made: absolute, named with its token, a real
    folder (not a link) of this user."""
    if not root.is_absolute() or f"{token}-" not in root.name:
        return False
    try:
        info = os.lstat(root)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path.is_relative_to(root) for root in roots)


def _clean_one(entries: _Entries, cleaned: Cleaned) -> None:
    cleaned.processes += _end_processes(entries)
    roots = [root for root in entries.sandboxes if _ours(root, entries.token)]
    for path in dict.fromkeys(entries.private):
        if _inside(path, roots) and not path.is_symlink() and path.is_file():
            with contextlib.suppress(OSError):
                path.unlink()
                cleaned.private_files += 1
    tops = [root for root in dict.fromkeys(roots) if not _inside(root.parent, roots)]
    for root in tops:
        with contextlib.suppress(OSError):
            if remove_tree(root):
                sandbox_removed(root)
        if os.path.lexists(root):
            cleaned.problems.append(f"Could not remove {root}: remove it by hand.")
        else:
            cleaned.sandboxes += 1


def _ledger_files(folder: Path) -> Iterator[Path]:
    try:
        names = os.listdir(folder)
    except OSError:
        return
    now = time.time()
    for name in sorted(names):
        path = folder / name
        if name.endswith(SUFFIX):
            yield path
        elif name.startswith(NEW_PREFIX):
            with contextlib.suppress(OSError):
                if now - os.lstat(path).st_mtime > NEW_GRACE_SECONDS:
                    yield path


def clean_dead_and_say(say: Callable[[str], None]) -> Cleaned:
    """:func:`clean_dead` in the sandbox parent, each line of what it removed to ``say``; a
    sandbox parent that cannot be used is left to the sandbox's own error."""
    try:
        cleaned = clean_dead()
    except OSError:
        return Cleaned()
    for line in cleaned.lines():
        say(line)
    return cleaned


def clean_dead(base: Path | None = None) -> Cleaned:
    """Remove what every dead caliper process's ledger in ``base`` (default: the sandbox
    parent) names, and the ledger (see the module docstring). A ledger a live process holds
    is left alone."""
    cleaned = Cleaned()
    folder = ledger_folder(base or location())
    try:
        if not _private_folder(folder, create=False):
            return cleaned
    except (LedgerUnsafe, OSError):
        return cleaned
    for path in _ledger_files(folder):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its process is alive (or another cleaner has it)
            try:
                same = os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                continue  # cleaned meanwhile
            entries = _read_entries(fd)
            if entries is not None:
                _clean_one(entries, cleaned)
                cleaned.runs += 1
            with contextlib.suppress(OSError):
                path.unlink()
        finally:
            os.close(fd)
    return cleaned
