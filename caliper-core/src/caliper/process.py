"""The one place Caliper starts agent processes.

Every process runs in its own session (process group). On timeout, on Ctrl-C, and after every
normal exit, the whole group is killed, so grandchildren an agent left behind never outlive the
attempt. Output goes to temporary files (no pipe can fill up and deadlock) and is read back
bounded.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

DEFAULT_OUTPUT_LIMIT = 64 * 1024 * 1024
KILL_GRACE_SECONDS = 2.0

_live_groups: set[int] = set()
_live_lock = threading.Lock()
_stopping = threading.Event()


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


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def _terminate_group(pgid: int, process: subprocess.Popen[bytes]) -> None:
    _kill_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + KILL_GRACE_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None and not _group_alive(pgid):
            return
        time.sleep(0.05)
    _kill_group(pgid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=KILL_GRACE_SECONDS)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _read_bounded(handle: tempfile._TemporaryFileWrapper[bytes], limit: int) -> str:  # type: ignore[name-defined]
    handle.flush()
    size = handle.seek(0, os.SEEK_END)
    if size > limit:
        handle.seek(size - limit)
        prefix = f"[… {size - limit} bytes of earlier output dropped …]\n"
    else:
        handle.seek(0)
        prefix = ""
    return prefix + handle.read().decode("utf-8", errors="replace")


def run_process(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout: float | None,
    stdin_text: str | None = None,
    output_limit: int = DEFAULT_OUTPUT_LIMIT,
) -> ProcessResult:
    """Run ``argv`` to completion or until ``timeout`` seconds, then kill its process group.

    ``stdin_text`` is written to the process's stdin (which is closed either way, so no CLI
    waits for input). ``env`` is the complete environment: nothing is inherited.
    """
    started = time.monotonic()
    with (
        tempfile.TemporaryFile() as out,
        tempfile.TemporaryFile() as err,
        tempfile.TemporaryFile() as inp,
    ):
        if stdin_text is not None:
            inp.write(stdin_text.encode("utf-8"))
            inp.seek(0)
        try:
            process = subprocess.Popen(
                list(argv),
                stdin=inp,
                stdout=out,
                stderr=err,
                cwd=str(cwd),
                env=dict(env),
                start_new_session=True,
            )
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
            _live_groups.add(pgid)
        timed_out = interrupted = False
        try:
            deadline = None if timeout is None else started + timeout
            while True:
                try:
                    process.wait(timeout=0.1)
                    break
                except subprocess.TimeoutExpired:
                    if _stopping.is_set():
                        interrupted = True
                        break
                    if deadline is not None and time.monotonic() >= deadline:
                        timed_out = True
                        break
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            _terminate_group(pgid, process)
            with _live_lock:
                _live_groups.discard(pgid)
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


def stop_all() -> None:
    """End every running agent process group (Ctrl-C) and make new waits return at once."""
    _stopping.set()
    with _live_lock:
        groups = list(_live_groups)
    for pgid in groups:
        _kill_group(pgid, signal.SIGTERM)


def reset_stop() -> None:
    """Allow processes to run again after ``stop_all`` (used between runs in one process)."""
    _stopping.clear()
