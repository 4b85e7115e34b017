"""The one place Caliper starts agent processes, and makes sure none outlives its attempt.

Every process runs in its own session (process group). Its stdin, stdout and stderr are
anonymous files (no pipe can fill up and deadlock), read back bounded: in memory (``memfd``)
on Linux, so starting a process creates no file on disk (see :func:`_capture_file`), temporary
files elsewhere. Its exit is noticed at once: a ``poll`` on its pidfd (Linux 5.3+), or a reaper
thread blocked in ``wait()`` elsewhere (:class:`_ExitWatch`).

**Ending every descendant.** Killing the process group is not enough: a process the agent (or
an ``assert:``, a ``setup:``) starts with ``setsid`` or ``daemon()`` is in another session and
escapes the group kill. So, on Linux:

* every process gets a unique marker in its environment (``CALIPER_PROCESS_TAG``), which its
  descendants inherit, daemonised or not;
* the caliper process makes itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``,
  :func:`adopt_orphans`), so a descendant whose parent exits is re-parented to caliper instead
  of to init, and stays findable even if it dropped the marker (``env -i``);
* when the process ends (normal exit, timeout, stop), its group is killed and then every live
  process that carries its marker, or descends from it or from one that does, is killed too,
  round after round until none is left (:func:`end_descendants`; while caliper is a subreaper
  a scan walks only the processes below it, see :func:`_own_subtree`); adopted orphans that carry no
  marker are ended once no other process is running, and at the end of the run
  (:func:`sweep_orphans`), and adopted zombies are reaped. ``caliper run`` turns this on at the
  start of a run; a program that only calls :func:`run_process` keeps its other children.

Where ``/proc`` is not available (macOS, BSD) only the process-group kill applies: a process
that starts its own session there can outlive its attempt.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import itertools
import math
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO, Protocol

import attrs

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
_starts = [0]
"""How many processes :func:`run_process` has started (counted under ``_spawn_lock``)."""
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


@attrs.frozen
class ProcessResult:
    """How a process ended: exit code (``None`` if killed at timeout), output, wall time."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    interrupted: bool
    duration_seconds: float

    def stderr_tail(self, lines: int = 20) -> str:
        """The last ``lines`` lines of stderr, for error messages."""
        return "\n".join(self.stderr.strip().splitlines()[-lines:])


# -- finding descendants ----------------------------------------------------------------------
@attrs.frozen
class _Proc:
    pid: int
    ppid: int
    state: str
    started: int
    tag: str | None


def _read(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


_MARKER = TAG_VARIABLE.encode() + b"="


def _read_proc(pid: int, newer_than: int) -> _Proc | None:
    stat = _read(f"{PROC}/{pid}/stat")
    if stat is None:
        return None
    fields = stat.rsplit(b")", 1)[-1].split()
    try:
        state, ppid, started = fields[0].decode(), int(fields[1]), int(fields[19])
    except (IndexError, ValueError):
        return None
    tag = None
    # only a process started after ours can carry its marker: read no other environment
    if state != "Z" and started >= newer_than:
        environ = _read(f"{PROC}/{pid}/environ") or b""
        at = environ.find(_MARKER)
        if at == 0 or (at > 0 and environ[at - 1 : at] == b"\0"):
            value = environ[at + len(_MARKER) :].split(b"\0", 1)[0]
            tag = value.decode(errors="replace")
    return _Proc(pid, ppid, state, started, tag)


def _children(pid: int) -> list[int] | None:
    """The children of ``pid`` (of all its threads), ``None`` when ``/proc`` cannot say."""
    try:
        threads = os.listdir(f"{PROC}/{pid}/task")
    except FileNotFoundError:
        return []  # it is gone: no children to find
    except OSError:
        return None
    found: list[int] = []
    for thread in threads:
        text = _read(f"{PROC}/{pid}/task/{thread}/children")
        if text is None:
            if os.path.exists(f"{PROC}/{pid}/task/{thread}"):
                return None  # no such file: a kernel without CONFIG_PROC_CHILDREN
            continue  # the thread ended meanwhile
        found += [int(child) for child in text.split()]
    return found


def _own_subtree(newer_than: int) -> dict[int, _Proc] | None:
    """Every process below this one, found by walking ``/proc/PID/task/*/children`` down
    from it (``None`` where the kernel has no ``children`` files).

    Only valid while this process is a child subreaper (:func:`adopt_orphans`): then every
    descendant of a process started here stays below it, its orphans being re-parented to
    this process (or to a subreaper that is itself below), so this walk finds what a scan of
    all of ``/proc`` would find, at the cost of the few processes of the run instead of every
    process on the machine.
    """
    table: dict[int, _Proc] = {}
    stack = [os.getpid()]
    while stack:
        children = _children(stack.pop())
        if children is None:
            return None
        for pid in children:
            if pid in table:
                continue
            found = _read_proc(pid, newer_than)
            if found is not None:
                table[pid] = found
                stack.append(pid)
    return table


def _process_table(newer_than: int = 0) -> dict[int, _Proc]:
    """Every process visible in ``/proc`` that can matter (empty where there is no
    ``/proc``); markers are read only for processes started at or after ``newer_than`` (clock
    ticks since boot).

    While this process is a child subreaper that is the processes below it
    (:func:`_own_subtree`); otherwise every process on the machine.
    """
    if _adopting.is_set():
        subtree = _own_subtree(newer_than)
        if subtree is not None:
            return subtree
    return _full_table(newer_than)


def _full_table(newer_than: int = 0) -> dict[int, _Proc]:
    """Every process in ``/proc`` (see :func:`_process_table`)."""
    table: dict[int, _Proc] = {}
    try:
        names = os.listdir(PROC)
    except OSError:
        return table
    for name in names:
        if name.isdigit():
            found = _read_proc(int(name), newer_than)
            if found is not None:
                table[found.pid] = found
    return table


def _start_time(pid: int) -> int:
    """When ``pid`` started (clock ticks since boot), 0 when unknown."""
    found = _read_proc(pid, newer_than=1 << 62)
    return found.started if found is not None else 0


def _with_descendants(roots: Iterable[int], table: Mapping[int, _Proc]) -> set[int]:
    children: dict[int, list[int]] = {}
    for proc in table.values():
        children.setdefault(proc.ppid, []).append(proc.pid)
    found: set[int] = set()
    stack = [pid for pid in roots if pid in table]
    while stack:
        pid = stack.pop()
        if pid in found:
            continue
        found.add(pid)
        stack.extend(children.get(pid, ()))
    return found


def _tree(root: int, tag: str, table: Mapping[int, _Proc], since: int) -> set[int]:
    """Live processes of one started process: its marker's carriers, its and their descendants.

    ``root`` counts only while its start time is still ``since`` (its pid was not reused).
    """
    carriers = [p.pid for p in table.values() if p.tag == tag]
    same_root = root in table and (since == 0 or table[root].started == since)
    roots = [root, *carriers] if same_root else carriers
    mine = os.getpid()
    return {
        pid for pid in _with_descendants(roots, table) if pid != mine and table[pid].state != "Z"
    }


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
                if p.ppid == mine
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
STOP_CHECK_SECONDS = 0.1
"""How often a waiting process checks for a stop request (an exit is noticed at once)."""


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


class StartedProcess(Protocol):
    """What :func:`run_process` needs of a started process (``subprocess.Popen`` has it)."""

    pid: int
    returncode: int | None

    def poll(self) -> int | None:
        """The exit code if it has exited (and is reaped), else ``None``; never blocks."""

    def wait(self, timeout: float | None = None) -> int:
        """Block until it exits (``subprocess.TimeoutExpired`` after ``timeout``)."""


Starter = Callable[[list[str], BinaryIO, BinaryIO, BinaryIO, Path, dict[str, str]], StartedProcess]
"""Starts ``argv`` with stdin, stdout, stderr, working directory and complete environment."""


def _popen(
    argv: list[str],
    stdin: BinaryIO,
    stdout: BinaryIO,
    stderr: BinaryIO,
    cwd: Path,
    env: dict[str, str],
) -> StartedProcess:
    return subprocess.Popen(
        argv,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        cwd=str(cwd),
        env=env,
        start_new_session=True,
    )


_MEMFD = hasattr(os, "memfd_create") and sys.platform.startswith("linux")
FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02


def _capture_file(name: str) -> BinaryIO:
    """An anonymous read-write file for one of a process's standard streams.

    On Linux a ``memfd`` (memory, like a temporary file on a tmpfs ``/tmp``): a temporary
    file on a disk file system costs an inode per stream, and on ext4 without a journal every
    inode allocation scans past the inodes freed in the last minutes, so a long run paid more
    for each start the longer it went on. Elsewhere, or when the kernel refuses,
    an unnamed temporary file. Memory is bounded by :func:`_trim` while the process runs.
    """
    if _MEMFD:
        try:
            fd = os.memfd_create(f"caliper-{name}", os.MFD_CLOEXEC)
        except OSError:
            pass
        else:
            return os.fdopen(fd, "w+b")
    return tempfile.TemporaryFile()  # type: ignore[return-value]


@functools.cache
def _libc_fallocate() -> Callable[..., int] | None:
    """libc's ``fallocate`` (looked up once), or ``None`` where there is none."""
    try:
        function = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    function.restype = ctypes.c_int
    return function


def _punch_hole(fd: int, length: int) -> bool:
    """Free the first ``length`` bytes of ``fd`` (its size is kept); false when unsupported."""
    function = _libc_fallocate()
    if function is None:
        return False
    return function(fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE, 0, length) == 0


def _trim(handle: BinaryIO, limit: int) -> None:
    """Keep a running process's in-memory output within about twice ``limit`` bytes.

    Only the last ``limit`` bytes are ever read back (:func:`_read_bounded`); once the file
    holds more than twice that, the memory of everything before its last ``limit`` bytes is
    freed (a hole: the size, and so the count of dropped bytes, stays). Called each time the
    wait wakes up (at least every :data:`STOP_CHECK_SECONDS`). Files on disk are left alone.
    """
    if not _MEMFD:
        return
    with contextlib.suppress(OSError, ValueError):
        size = os.fstat(handle.fileno()).st_size
        if size > 2 * limit:
            page = _page_size()
            _punch_hole(handle.fileno(), (size - limit) // page * page)


def _page_size() -> int:
    """The memory page size (hole punching works in whole pages)."""
    return os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _read_bounded(handle: BinaryIO, limit: int) -> str:
    handle.flush()
    size = handle.seek(0, os.SEEK_END)
    if size > limit:
        handle.seek(size - limit)
        prefix = f"[… {size - limit} bytes of earlier output dropped …]\n"
    else:
        handle.seek(0)
        prefix = ""
    return prefix + handle.read().decode("utf-8", errors="replace")


def _should_stop(keep_on_stop: bool) -> bool:
    return _forced.is_set() or (_stopping.is_set() and not keep_on_stop)


def starts_so_far() -> int:
    """How many processes :func:`run_process` has started in this process so far (the run
    waits for its first attempts' agents to start before doing work that can wait)."""
    return _starts[0]


def run_process(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float | None,
    stdin_text: str | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
    keep_on_stop: bool = False,
    starter: Starter | None = None,
) -> ProcessResult:
    """Run ``argv`` to completion or until ``timeout`` seconds, then end all it started.

    ``starter`` starts the process instead of ``subprocess.Popen`` (the warm ``assert:``
    runner forks it from a waiting Python); it must put it in a new session of its own, with
    exactly the environment given, and return a :class:`StartedProcess`.

    ``stdin_text`` is written to the process's stdin (which is closed either way, so no CLI
    waits for input). ``env`` is the complete environment: nothing is inherited (the
    ``CALIPER_PROCESS_TAG`` marker is added). With ``keep_on_stop`` (a task's cleanup) the
    process survives a first :func:`stop_all` and ends only on a forced one.
    """
    started = time.monotonic()
    tag = f"{os.getpid()}-{next(_tags)}-{time.time_ns() % 1_000_000_007}"
    with (
        _capture_file("stdout") as out,
        _capture_file("stderr") as err,
        _capture_file("stdin") as inp,
    ):
        if stdin_text is not None:
            inp.write(stdin_text.encode("utf-8"))
            inp.seek(0)
        from caliper.system import ledger

        ledger.note_process_tag(tag)
        try:
            with _spawn_lock:
                process = (starter or _popen)(
                    list(argv), inp, out, err, cwd, {**env, TAG_VARIABLE: tag}
                )
                _spawned.add(process.pid)
                _starts[0] += 1
            since = _start_time(process.pid)
            ledger.note_process(process.pid, since, tag)
        except OSError as exc:
            return ProcessResult(
                tuple(argv),
                127,
                "",
                f"could not start {argv[0]}: {exc}",
                False,
                False,
                time.monotonic() - started,
            )
        pgid = process.pid
        with _live_lock:
            _live[pgid] = keep_on_stop
        _started()
        timed_out = interrupted = False
        exited = _ExitWatch(process)
        try:
            deadline = None if timeout is None else started + timeout
            while True:
                step = STOP_CHECK_SECONDS
                if deadline is not None:
                    step = min(step, max(0.0, deadline - time.monotonic()))
                if exited.wait(step):
                    break
                _trim(out, output_limit)
                _trim(err, output_limit)
                if _should_stop(keep_on_stop):
                    interrupted = True
                    break
                if deadline is not None and time.monotonic() >= deadline:
                    timed_out = True
                    break
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            exited.close()
            last_scan = _terminate(process, tag, since)
            with _live_lock:
                _live.pop(pgid, None)
            sweep_orphans(last_scan)
        duration = time.monotonic() - started
        returncode = None if (timed_out or interrupted) else process.returncode
        return ProcessResult(
            argv=tuple(argv),
            returncode=returncode,
            stdout=_read_bounded(out, output_limit),
            stderr=_read_bounded(err, output_limit),
            timed_out=timed_out,
            interrupted=interrupted,
            duration_seconds=duration,
        )


def start_service(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path
) -> subprocess.Popen[bytes]:
    """Start a helper that lives for the whole run (the warm ``assert:`` server).

    It runs in its own session with a pipe on stdin (closing it asks it to end) and no
    output; it is known as started here, so the orphan sweep never takes it for an adopted
    orphan. End it, then call :func:`forget_service`.
    """
    with _spawn_lock:
        popen = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=str(cwd),
            env=dict(env),
            start_new_session=True,
        )
        _spawned.add(popen.pid)
    from caliper.system import ledger

    ledger.note_process(popen.pid, _start_time(popen.pid), None)
    return popen


def forget_service(popen: subprocess.Popen[bytes]) -> None:
    """After a service from :func:`start_service` has been reaped."""
    with _spawn_lock:
        _spawned.discard(popen.pid)


def stop_all(*, force: bool = False) -> None:
    """End every running process group and make new waits return at once.

    A first stop spares processes started with ``keep_on_stop`` (cleanups); ``force`` (the
    second Ctrl-C) ends those too.
    """
    _stopping.set()
    if force:
        _forced.set()
    with _live_lock:
        groups = [pgid for pgid, keep in _live.items() if force or not keep]
    for pgid in groups:
        _kill_group(pgid, signal.SIGTERM)


def reset_stop() -> None:
    """Allow processes to run again after ``stop_all`` (used between runs in one process)."""
    _stopping.clear()
    _forced.clear()
