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

import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO, Protocol

from caliper.system import attrs_classes
from caliper.system.process._capture import _MEMFD as _MEMFD
from caliper.system.process._capture import _capture_file, _read_bounded, _trim
from caliper.system.process._reaper import (
    _ExitWatch,
    _kill_group,
    _terminate,
    adopt_orphans,
    end_descendants,
    reap_adopted,
    release_orphans,
    sweep_orphans,
)
from caliper.system.process._registry import (
    DEFAULT_OUTPUT_LIMIT,
    KILL_GRACE_SECONDS,
    STOP_CHECK_SECONDS,
    TAG_VARIABLE,
    _forced,
    _live,
    _live_lock,
    _spawn_lock,
    _spawned,
    _started,
    _starts,
    _stopping,
    _tags,
    after_start,
    registered_start,
)
from caliper.system.process._table import (
    _full_table,
    _process_table,
    _read,
    _start_time,
    _with_descendants,
)

__all__ = [
    "DEFAULT_OUTPUT_LIMIT",
    "KILL_GRACE_SECONDS",
    "STOP_CHECK_SECONDS",
    "TAG_VARIABLE",
    "ProcessResult",
    "StartedProcess",
    "Starter",
    "adopt_orphans",
    "after_start",
    "end_descendants",
    "forget_service",
    "reap_adopted",
    "release_orphans",
    "reset_stop",
    "run_process",
    "start_service",
    "starts_so_far",
    "stop_all",
    "sweep_orphans",
]
_PRIVATE_FOR_TESTS = (_MEMFD, _full_table, _process_table, _read, _with_descendants)
"""Private helpers some tests and the warm ``assert:`` runner reach through this module."""


@attrs_classes.frozen
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
        try:
            process, since = _spawn(argv, (inp, out, err), cwd, {**env, TAG_VARIABLE: tag}, starter)
        except OSError as exc:
            failed = f"could not start {argv[0]}: {exc}"
            return ProcessResult(
                tuple(argv), 127, "", failed, False, False, time.monotonic() - started
            )
        timed_out, interrupted = _wait(
            process, tag, since, (out, err), output_limit, keep_on_stop, started, timeout
        )
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


def _spawn(
    argv: Sequence[str],
    streams: tuple[BinaryIO, BinaryIO, BinaryIO],
    cwd: Path,
    env: dict[str, str],
    starter: Starter | None,
) -> tuple[StartedProcess, int]:
    """Start ``argv`` with its marker noted in the ledger first; the process and its start
    time (raises ``OSError`` when it cannot start)."""
    from caliper.system import ledger

    ledger.note_process_tag(env[TAG_VARIABLE])
    inp, out, err = streams
    start = starter or _popen
    process = registered_start(lambda: start(list(argv), inp, out, err, cwd, env))
    since = _start_time(process.pid)
    ledger.note_process(process.pid, since, env[TAG_VARIABLE])
    return process, since


def _wait(
    process: StartedProcess,
    tag: str,
    since: int,
    outputs: tuple[BinaryIO, BinaryIO],
    output_limit: int,
    keep_on_stop: bool,
    started: float,
    timeout: float | None,
) -> tuple[bool, bool]:
    """Wait for ``process`` to exit, time out or be stopped, then end all it started;
    ``(timed_out, interrupted)``."""
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
            for handle in outputs:
                _trim(handle, output_limit)
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
    return timed_out, interrupted


def start_service(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path
) -> subprocess.Popen[bytes]:
    """Start a helper that lives for the whole run (the warm ``assert:`` server).

    It runs in its own session with a pipe on stdin (closing it asks it to end) and no
    output; it is known as started here, so the orphan sweep never takes it for an adopted
    orphan. End it, then call :func:`forget_service`.
    """
    popen = registered_start(
        lambda: subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=str(cwd),
            env=dict(env),
            start_new_session=True,
        ),
        counted=False,
    )
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
