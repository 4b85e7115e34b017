"""The one lock of a run's journal: ``<results>/<spec>/<run-id>.lock``, held with ``flock``.

Every process that writes a run's journal holds this lock first: a new run as it claims its
id, ``caliper run --resume`` before it reads the run it continues (so what it plans from
cannot change under it), ``caliper retry`` for the new run it makes (and it refuses a parent
whose lock another process holds). Taking it is one atomic ``flock(LOCK_EX | LOCK_NB)``, so of
two processes started at the same moment exactly one gets it, at any spacing; the other is
refused. The lock is released when the run is saved (the file is removed while still held) or
when the process ends, however it ends (the kernel drops a dead process's locks), so a killed
run never leaves a lock that blocks its resume.

A lock file removed by its holder can still be open in a process that was about to lock it:
after locking, the file's identity is compared with what the path names now, and a stale one is
let go and tried again.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import threading
from pathlib import Path

LOCK_SUFFIX = ".lock"
_ATTEMPTS = 5
_UNSUPPORTED = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL}

_held: dict[Path, int | None] = {}
"""Lock files this process holds -> their descriptor (``None``: the file system has no locks)."""
_guard = threading.Lock()


def lock_path(folder: Path, run_id: str) -> Path:
    """Where the lock of run ``run_id`` in the results ``folder`` is."""
    return folder / f"{run_id}{LOCK_SUFFIX}"


def acquire(folder: Path, run_id: str) -> bool:
    """Take the lock of run ``run_id`` in ``folder`` for this process; ``False`` when another
    process holds it. Taking a lock this process already holds is true at once.

    On a file system without ``flock`` the run goes on unlocked (true). Raises
    :class:`OSError` when the folder cannot be written.
    """
    path = lock_path(folder, run_id)
    with _guard:
        if path in _held:
            return True
        folder.mkdir(parents=True, exist_ok=True)
        for _ in range(_ATTEMPTS):
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno in _UNSUPPORTED:
                    _held[path] = None
                    return True
                return False
            try:
                now = os.stat(path)
            except FileNotFoundError:
                now = None
            mine = os.fstat(fd)
            if now is None or (now.st_ino, now.st_dev) != (mine.st_ino, mine.st_dev):
                os.close(fd)  # its holder removed it meanwhile: lock the file there now
                continue
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                os.write(fd, f"{os.getpid()}\n".encode())
            _held[path] = fd
            return True
        return False


def release(folder: Path, run_id: str) -> None:
    """Let go of a lock :func:`acquire` took (removing its file first); nothing when not held."""
    path = lock_path(folder, run_id)
    with _guard:
        if path not in _held:
            return
        fd = _held.pop(path)
        with contextlib.suppress(OSError):
            path.unlink()
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def held_elsewhere(folder: Path, run_id: str) -> bool:
    """True when another live process holds the lock of run ``run_id`` in ``folder``."""
    path = lock_path(folder, run_id)
    with _guard:
        if path in _held:
            return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError as exc:
        return exc.errno not in _UNSUPPORTED
    finally:
        os.close(fd)
    return False
