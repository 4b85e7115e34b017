"""The one writer of every named output: results, ``--output``, ``--junit``, ``-o`` pages,
``merge``, ``import``, ``tune --write`` and the tune session files.

:func:`write_output` decides by what the path is:

* a regular file (or a path that does not exist yet) is replaced atomically: the bytes go
  to a temporary file in the same folder, are flushed to disk, and the temporary file is
  renamed over the target, so a reader sees the old content or the whole new one, never a
  part. An existing file keeps its mode (and, where allowed, its owner); a new one gets the
  mode a plain ``open()`` would give it. A symlink is followed: the link stays, its target is
  replaced.
* a character device or a FIFO (``/dev/null``, ``/dev/full``, a named pipe) is opened and
  written in place, never renamed over, whoever runs caliper (root included). A FIFO that no
  program reads is refused at once instead of hanging.
* ``/dev/stdout``, ``/dev/stderr`` and ``/dev/fd/N`` (``/proc/self/fd/N``) are the process's
  own descriptor N, written as it is (a redirect to a file is appended to, not replaced).
* anything else (a folder, a block device, a socket) is refused.

The data is bytes, a ``str`` (written as UTF-8), or pieces of text (any iterable of ``str``,
encoded and written as they come, so a large output need not be held whole in memory); the
atomic replacement is the same for all three.

Every failure is an :class:`OutputWriteError` naming the path; a write refused for want of
space (``ENOSPC``, ``EDQUOT``) has exit code 74 and says the previous content is intact.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from caliper.errors import CaliperError
from caliper.system.os_errors import describe_os_error, is_full

CHUNK_BYTES = 1 << 16
"""Pieces of text are gathered into writes of about this size."""

Payload = bytes | Iterable[bytes]
"""What is written: all the bytes, or the bytes chunk by chunk."""

EXIT_FULL = 74
"""Exit code of an output refused because the disk (or quota) is full (sysexits' EX_IOERR)."""

_OWN_FD = re.compile(r"^/(?:dev/fd|proc/self/fd)/(\d+)$")
_STD_NAMES = {"/dev/stdout": 1, "/dev/stderr": 2, "/dev/stdin": 0}


class OutputWriteError(CaliperError):
    """A named output could not be written; ``full`` when the disk (or quota) was full.

    ``path`` is the output's path. Exit code 74 when ``full``, else 1."""

    def __init__(
        self,
        message: str,
        *,
        path: Path,
        full: bool = False,
        hint: str | None = None,
        exit_code: int | None = None,
    ):
        super().__init__(message, hint=hint, exit_code=exit_code or (EXIT_FULL if full else None))
        self.path = path
        self.full = full

    @property
    def reason(self) -> str:
        """The message without its leading ``Could not write PATH: ``."""
        return self.message.split(": ", 1)[-1]


def _new_file_mode() -> int:
    """The mode a plain ``open()`` would give a new file (0666 minus the umask)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def own_descriptor(path: Path) -> int | None:
    """The descriptor ``path`` names when it is this process's own (``/dev/stdout``,
    ``/dev/fd/N``, ``/proc/self/fd/N``), else ``None``."""
    text = os.path.normpath(str(path))
    if text in _STD_NAMES:
        return _STD_NAMES[text]
    match = _OWN_FD.match(text)
    return int(match.group(1)) if match else None


def _mode(path: Path) -> int | None:
    """``path``'s file type and mode through every link (``None``: nothing there yet)."""
    try:
        return os.stat(path).st_mode
    except FileNotFoundError:
        return None


def writes_in_place(path: Path) -> bool:
    """True when ``path`` is written in place (a character device, a FIFO, one of the
    process's own descriptors): the folder it is in need not be writable."""
    if own_descriptor(path) is not None:
        return True
    try:
        mode = _mode(path)
    except OSError:
        return False
    return mode is not None and (stat.S_ISCHR(mode) or stat.S_ISFIFO(mode))


def output_problem(path: Path) -> str | None:
    """Why ``path`` cannot take an output (it is a folder, block device or socket), if so."""
    if own_descriptor(path) is not None:
        return None
    try:
        mode = _mode(path)
    except OSError:
        return None  # unreadable: the write will say why
    if mode is None or stat.S_ISREG(mode) or stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return None
    return f"it is {_kind(mode)}, not a file"


def replace_problem(path: Path) -> str | None:
    """Why the existing regular file ``path`` could not be replaced by :func:`write_output`,
    if so: it is read-only (no write permission bit, or none for this user), or its folder
    takes no new file (tried with an empty temporary file, removed at once)."""
    info = os.stat(path)
    if not info.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH) or not os.access(
        path, os.W_OK
    ):
        return "it is read-only"
    folder = Path(os.path.realpath(path)).parent
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        return f"its folder {folder} takes no new file ({describe_os_error(exc)})"
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
    return None


def failure(path: Path, exc: OSError, *, replacing: bool = True) -> OutputWriteError:
    """The :class:`OutputWriteError` for ``exc`` raised while writing ``path``."""
    full = is_full(exc)
    message = f"Could not write {path}: {describe_os_error(exc)}."
    if full and replacing:
        message = (
            f"Could not write {path}: no space left on the device ({describe_os_error(exc)}); "
            f"its previous content, if any, is intact."
        )
    elif full:
        message = f"Could not write {path}: no space left on the device ({describe_os_error(exc)})."
    return OutputWriteError(message, path=path, full=full)


def write_output(
    path: Path,
    data: bytes | str | Iterable[str | bytes],
    *,
    make_parents: bool = True,
    durable: bool = True,
) -> None:
    """Write ``data`` (``str`` and pieces of text as UTF-8; pieces may also be bytes) to the
    named output ``path`` (see the module text).

    ``make_parents`` creates a missing folder for a new regular file. ``durable=False`` (a
    cache that its reader checks and can make again) replaces a regular file just as
    atomically for every reader, but without waiting for the data and the rename to reach
    the disk, so a machine crash may leave the old content or a part of the new one. Raises
    :class:`OutputWriteError` on any failure; no temporary file is left behind.
    """
    payload = _payload(data)
    fd = own_descriptor(path)
    if fd is not None:
        _write_descriptor(path, fd, payload)
        return
    try:
        mode = _mode(path)
    except OSError as exc:
        raise failure(path, exc) from exc
    if mode is None or stat.S_ISREG(mode):
        _replace_file(
            Path(os.path.realpath(path)), payload, mode, make_parents, shown=path, durable=durable
        )
    elif stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        _write_stream(path, payload)
    else:
        raise OutputWriteError(
            f"Could not write {path}: it is {_kind(mode)}, not a file.",
            path=path,
            hint="Name a file instead.",
        )


def _payload(data: bytes | str | Iterable[str | bytes]) -> Payload:
    """``data`` as bytes (``str`` encoded), or pieces (text encoded) as chunks of bytes."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode("utf-8")
    return _chunks(data)


def _chunks(pieces: Iterable[str | bytes]) -> Iterator[bytes]:
    """``pieces`` (text encoded as UTF-8) gathered into chunks of about :data:`CHUNK_BYTES`."""
    gathered: list[bytes] = []
    size = 0
    for piece in pieces:
        encoded = piece if isinstance(piece, bytes) else piece.encode("utf-8")
        gathered.append(encoded)
        size += len(encoded)
        if size >= CHUNK_BYTES:
            yield b"".join(gathered)
            gathered, size = [], 0
    if gathered:
        yield b"".join(gathered)


def _write_all(fd: int, payload: Payload) -> None:
    for chunk in (payload,) if isinstance(payload, bytes) else payload:
        view = memoryview(chunk)
        while view:
            view = view[os.write(fd, view) :]


def _write_descriptor(path: Path, fd: int, payload: Payload) -> None:
    """Write to this process's own descriptor ``fd`` (``/dev/stdout`` and the like)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            if stream is not None and stream.fileno() == fd:
                stream.flush()
    try:
        _write_all(fd, payload)
    except OSError as exc:
        raise failure(path, exc, replacing=False) from exc


def _write_stream(path: Path, payload: Payload) -> None:
    """Write into a character device or FIFO in place (opened without blocking, so a FIFO
    nobody reads fails at once)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise OutputWriteError(
                f"Could not write {path}: it is a named pipe (FIFO) that no program is reading.",
                path=path,
                hint="Start the reader first (e.g. `cat FIFO > out &`), or name a file.",
            ) from exc
        raise failure(path, exc, replacing=False) from exc
    try:
        os.set_blocking(fd, True)
        _write_all(fd, payload)
    except OSError as exc:
        raise failure(path, exc, replacing=False) from exc
    finally:
        os.close(fd)


def replace_file(
    path: Path,
    payload: bytes,
    *,
    on_open: Callable[[int], None] | None = None,
    keep_open: bool = False,
) -> int | None:
    """Replace the regular file ``path`` (or create it) atomically; the low-level step of
    :func:`write_output` for a caller that needs the new file's descriptor.

    ``on_open`` is called with the temporary file's descriptor before anything is written
    (e.g. to lock it); with ``keep_open`` that descriptor is returned open after the rename
    (the caller closes it), else ``None``. Raises :class:`OutputWriteError`.
    """
    try:
        mode = _mode(path)
    except OSError as exc:
        raise failure(path, exc) from exc
    return _replace_file(
        Path(os.path.realpath(path)),
        payload,
        mode,
        True,
        shown=path,
        on_open=on_open,
        keep_open=keep_open,
    )


def _replace_file(
    target: Path,
    payload: Payload,
    mode: int | None,
    make_parents: bool,
    *,
    shown: Path,
    on_open: Callable[[int], None] | None = None,
    keep_open: bool = False,
    durable: bool = True,
) -> int | None:
    """Replace the regular file ``target`` (or create it) atomically (flushed to disk, file
    and folder, when ``durable``)."""
    temp: str | None = None
    fd: int | None = None
    try:
        if make_parents:
            target.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        if mode is not None:
            os.fchmod(fd, stat.S_IMODE(mode))
            with contextlib.suppress(OSError):  # keep the owner where allowed (root)
                info = os.stat(target)
                if (info.st_uid, info.st_gid) != (os.geteuid(), os.getegid()):
                    os.fchown(fd, info.st_uid, info.st_gid)
        else:
            os.fchmod(fd, _new_file_mode())
        if on_open is not None:
            on_open(fd)
        _write_all(fd, payload)
        if durable:
            os.fsync(fd)
        os.replace(temp, target)
        temp = None
        if durable:
            _sync_folder(target.parent)
    except OSError as exc:
        raise failure(shown, exc) from exc
    finally:
        if temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(temp)
        if fd is not None and (temp is not None or not keep_open):
            os.close(fd)
    return fd if keep_open else None


def _sync_folder(folder: Path) -> None:
    """Flush the folder entry of a rename to disk (best effort: not every system can)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
