"""A started process's standard streams: anonymous files, kept bounded, read back as text."""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys
import tempfile
from collections.abc import Callable
from typing import BinaryIO

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
