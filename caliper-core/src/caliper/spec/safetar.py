"""Unpacking a tar archive of a git commit without letting it write or point outside its folder.

Every member is checked here, whatever the Python version: absolute names, names that climb
out with ``..``, symlinks or hard links whose target leaves the tree, and anything that is not
a plain file, folder or link (devices, FIFOs) are refused with :class:`UnsafeArchive`. Where
Python has tar's ``data`` extraction filter (3.10.12+, 3.11.4+, 3.12+) it is applied as well;
where it has not, file modes are cleaned the same way (no set-uid/set-gid/sticky bits, no
write for group and others), and nothing may lie under a symlink of the archive (it would be
written through the link). After unpacking, every symlink in the tree is resolved once more
and must stay inside it.

Every archive is also bounded (:class:`UnpackLimits`): the total size of its files, the ratio
of that total to the archive's own size (a highly compressed "bomb"), and its number of
entries. They are checked while the member headers are read, one by one, before a byte is
written, so an archive over a limit is refused (:class:`ArchiveTooBig`, naming the archive and
the limit) after reading at most the header that crosses it. The limits come from
``CALIPER_UNPACK_MAX_BYTES``, ``CALIPER_UNPACK_MAX_RATIO`` and ``CALIPER_UNPACK_MAX_ENTRIES``.
"""

from __future__ import annotations

import io
import os
import posixpath
import tarfile
from collections.abc import Callable, Mapping
from pathlib import Path

from caliper.system import attrs_classes


class UnsafeArchive(tarfile.TarError):
    """A member of the archive would write, or point, outside the folder it is unpacked in."""


class ArchiveTooBig(tarfile.TarError):
    """The archive exceeds a limit of :class:`UnpackLimits` (the message names it)."""


MAX_BYTES_VARIABLE = "CALIPER_UNPACK_MAX_BYTES"
MAX_RATIO_VARIABLE = "CALIPER_UNPACK_MAX_RATIO"
MAX_ENTRIES_VARIABLE = "CALIPER_UNPACK_MAX_ENTRIES"
DEFAULT_MAX_BYTES = 2 * 1024**3
DEFAULT_MAX_RATIO = 200.0
DEFAULT_MAX_ENTRIES = 200_000
RATIO_FLOOR_BYTES = 16 * 1024 * 1024
"""The ratio is checked only once the files add up to more than this (small archives of text
compress well and harm nobody)."""


@attrs_classes.frozen
class UnpackLimits:
    """What one archive may unpack to: ``max_bytes`` of files in all, at most ``max_ratio``
    times the archive's own size (once past :data:`RATIO_FLOOR_BYTES`), ``max_entries``
    members. ``0`` turns a limit off."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_ratio: float = DEFAULT_MAX_RATIO
    max_entries: int = DEFAULT_MAX_ENTRIES

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> UnpackLimits:
        """The limits the environment sets (the defaults where it sets none); a value that
        is not a number raises :class:`ValueError` naming the variable."""
        env = os.environ if environ is None else environ

        def read(name: str, default: float, kind: type) -> float:
            text = env.get(name, "").strip().replace("_", "")
            if not text:
                return default
            try:
                value = kind(text)
            except ValueError:
                value = -1
            if value < 0:
                raise ValueError(f"{name}={env.get(name)!r} is not a number of 0 or more")
            return value

        return cls(
            max_bytes=int(read(MAX_BYTES_VARIABLE, DEFAULT_MAX_BYTES, int)),
            max_ratio=float(read(MAX_RATIO_VARIABLE, DEFAULT_MAX_RATIO, float)),
            max_entries=int(read(MAX_ENTRIES_VARIABLE, DEFAULT_MAX_ENTRIES, int)),
        )


def _bounded_members(tar: tarfile.TarFile, label: str, packed: int, limits: UnpackLimits):
    """Every member of ``tar``, its headers read one at a time, refusing the archive
    (:class:`ArchiveTooBig`) as soon as one of ``limits`` is crossed."""
    members: list[tarfile.TarInfo] = []
    total = 0
    while True:
        member = tar.next()
        if member is None:
            return members
        members.append(member)
        if limits.max_entries and len(members) > limits.max_entries:
            raise ArchiveTooBig(
                f"{label} has more than {limits.max_entries:,} entries (the limit "
                f"{MAX_ENTRIES_VARIABLE}={limits.max_entries})"
            )
        if member.isfile():
            total += member.size
        if limits.max_bytes and total > limits.max_bytes:
            raise ArchiveTooBig(
                f"{label} unpacks to more than {limits.max_bytes:,} bytes (the limit "
                f"{MAX_BYTES_VARIABLE}={limits.max_bytes}; {member.name!r} alone is "
                f"{member.size:,} bytes)"
            )
        if limits.max_ratio and total > RATIO_FLOOR_BYTES and total > limits.max_ratio * packed:
            raise ArchiveTooBig(
                f"{label} ({packed:,} bytes) unpacks to more than {total:,} bytes, over "
                f"{limits.max_ratio:g} times its size (the limit {MAX_RATIO_VARIABLE}="
                f"{limits.max_ratio:g}): a compression bomb"
            )


def _climbs_out(relative: str) -> bool:
    """True when a ``/``-separated path relative to the tree root leaves it."""
    normal = posixpath.normpath(relative)
    return normal == ".." or normal.startswith("../") or posixpath.isabs(normal)


def member_problem(member: tarfile.TarInfo) -> str | None:
    """Why ``member`` must not be unpacked, or ``None`` when it is safe."""
    name = member.name
    if posixpath.isabs(name) or name.startswith("\\") or (len(name) > 1 and name[1] == ":"):
        return f"{name!r} has an absolute path"
    if _climbs_out(name):
        return f"{name!r} is outside the repository"
    if member.issym():
        if posixpath.isabs(member.linkname):
            return f"{name!r} links to the absolute path {member.linkname!r}"
        target = posixpath.join(posixpath.dirname(name), member.linkname)
        if _climbs_out(target):
            return f"{name!r} links to {member.linkname!r}, outside the repository"
        return None
    if member.islnk():
        if posixpath.isabs(member.linkname) or _climbs_out(member.linkname):
            return f"{name!r} is a hard link to {member.linkname!r}, outside the repository"
        return None
    if member.isfile() or member.isdir():
        return None
    return f"{name!r} is a device, FIFO or other special file"


def _clean_mode(member: tarfile.TarInfo) -> None:
    """What the ``data`` filter does to modes and owners, for Pythons without it."""
    if member.isdir():
        member.mode = 0o755
    elif member.isfile():
        member.mode = 0o755 if member.mode & 0o100 else 0o644
    member.uid = member.gid = 0
    member.uname = member.gname = ""


def _checked(members: list[tarfile.TarInfo], clean_modes: bool) -> list[tarfile.TarInfo]:
    links = {posixpath.normpath(m.name) for m in members if m.issym()}
    for member in members:
        problem = member_problem(member)
        parts = posixpath.normpath(member.name).split("/")
        through = next(
            ("/".join(parts[:i]) for i in range(1, len(parts)) if "/".join(parts[:i]) in links),
            None,
        )
        if problem is None and through is not None:
            # git never stores a file under a symlink; unpacking one would write through it
            problem = f"{member.name!r} lies under the symlink {through!r}"
        if problem is not None:
            raise UnsafeArchive(problem)
        if clean_modes:
            _clean_mode(member)
    return members


def _verify_links(tree: Path) -> None:
    root = os.path.realpath(tree)
    for folder, dirs, files in os.walk(tree):
        for name in (*dirs, *files):
            path = os.path.join(folder, name)
            if os.path.islink(path):
                resolved = os.path.realpath(path)
                if resolved != root and not resolved.startswith(root + os.sep):
                    raise UnsafeArchive(
                        f"{os.path.relpath(path, tree)!r} resolves to {resolved!r}, outside "
                        "the repository"
                    )


def extract(
    archive: Path,
    tree: Path,
    select: Callable[[list[tarfile.TarInfo]], list[tarfile.TarInfo]] | None = None,
    *,
    data: bytes | None = None,
    limits: UnpackLimits | None = None,
) -> None:
    """Unpack ``archive`` into ``tree`` (created); raise :class:`UnsafeArchive` (a
    ``tarfile.TarError``) for a member that would escape it, before anything escapes, and
    :class:`ArchiveTooBig` (one too) for an archive over ``limits`` (default: from the
    environment, :meth:`UnpackLimits.from_env`), before anything is written.

    ``data``, when given, is the archive's content (``archive`` then only names it).
    ``select``, when given, picks the members to unpack first (e.g. leaving out links that
    point outside the repository); every member it keeps is still checked.
    """
    if limits is None:
        try:
            limits = UnpackLimits.from_env()
        except ValueError as exc:
            raise ArchiveTooBig(f"cannot unpack {archive}: {exc}") from None
    has_filter = hasattr(tarfile, "data_filter")
    source = {"name": archive} if data is None else {"fileobj": io.BytesIO(data), "mode": "r"}
    packed = len(data) if data is not None else os.stat(archive).st_size
    with tarfile.open(**source) as tar:
        members = _bounded_members(tar, str(archive), packed, limits)
        tree.mkdir(parents=True, exist_ok=True)
        if select is not None:
            members = select(members)
        members = _checked(members, clean_modes=not has_filter)
        if has_filter:
            tar.extractall(tree, members=members, filter="data")
        else:
            tar.extractall(tree, members=members)
    _verify_links(tree)
