"""Operating-system errors in plain words, shared by every place that reports one."""

from __future__ import annotations

import errno

FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
"""Error numbers of a write refused for want of space (a full disk or an exhausted quota)."""

_REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "the file system is read-only",
    errno.EFBIG: "the file is larger than allowed",
    errno.ENOTDIR: "a file is in the way where a folder is needed",
    errno.EEXIST: "a file is in the way where a folder is needed",
}


def describe_os_error(exc: OSError) -> str:
    """Why ``exc`` happened, in a few plain words (the system's own text when not listed)."""
    return _REASONS.get(exc.errno or 0, exc.strerror or str(exc))


def is_full(exc: OSError) -> bool:
    """Whether ``exc`` is a write refused because the disk (or quota) is full."""
    return exc.errno in FULL
