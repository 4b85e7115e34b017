"""Unpacking a tar archive of a git commit without letting it write or point outside its folder.

Every member is checked here, whatever the Python version: absolute names, names that climb
out with ``..``, symlinks or hard links whose target leaves the tree, and anything that is not
a plain file, folder or link (devices, FIFOs) are refused with :class:`UnsafeArchive`. Where
Python has tar's ``data`` extraction filter (3.10.12+, 3.11.4+, 3.12+) it is applied as well;
where it has not, file modes are cleaned the same way (no set-uid/set-gid/sticky bits, no
write for group and others), and nothing may lie under a symlink of the archive (it would be
written through the link). After unpacking, every symlink in the tree is resolved once more
and must stay inside it.
"""

from __future__ import annotations

import os
import posixpath
import tarfile
from collections.abc import Callable
from pathlib import Path


class UnsafeArchive(tarfile.TarError):
    """A member of the archive would write, or point, outside the folder it is unpacked in."""


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
) -> None:
    """Unpack ``archive`` into ``tree`` (created); raise :class:`UnsafeArchive` (a
    ``tarfile.TarError``) for a member that would escape it, before anything escapes.

    ``select``, when given, picks the members to unpack first (e.g. leaving out links that
    point outside the repository); every member it keeps is still checked.
    """
    tree.mkdir(parents=True, exist_ok=True)
    has_filter = hasattr(tarfile, "data_filter")
    with tarfile.open(archive) as tar:
        members = tar.getmembers()
        if select is not None:
            members = select(members)
        members = _checked(members, clean_modes=not has_filter)
        if has_filter:
            tar.extractall(tree, members=members, filter="data")
        else:
            tar.extractall(tree, members=members)
    _verify_links(tree)
