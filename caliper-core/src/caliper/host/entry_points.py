"""Reading the installed packages' entry points without ``importlib.metadata``.

``importlib.metadata`` costs tens of milliseconds to import (it pulls in the ``email``
package, ``zipfile``, ``inspect``...), most of ``caliper validate``'s budget. What Caliper needs
from it is small: the entry points of a few groups, and the name and version of the
distributions that declare them. :func:`read_entry_points` finds the same ones, the same way:

- every ``*.dist-info`` and ``*.egg-info`` folder directly in each ``sys.path`` folder (and a
  ``.egg`` folder's ``EGG-INFO``), in ``sys.path`` order, then folder-listing order grouped by
  normalised name (as ``importlib.metadata``'s ``Lookup`` does);
- one distribution per normalised name (the part of the folder name before the first ``-``,
  PEP 503-normalised with ``_`` for ``-``): the first found wins, even when it declares no
  entry points;
- ``entry_points.txt`` read as ``importlib.metadata`` reads it (lines stripped, blank lines
  and ``#`` comments skipped, ``[group]`` headers, ``name = value`` split at the first ``=``);
- the display name and version from the ``Name:`` and ``Version:`` headers of ``METADATA``
  (``PKG-INFO`` for egg-info), read only for distributions that declare a wanted group.

Where that cannot be done exactly (a zip file on ``sys.path``, a distribution finder of its
own on ``sys.meta_path``, a line ``importlib.metadata`` would reject), it hands over to
``importlib.metadata`` itself, so the answer is always the one the standard library gives.
"""

from __future__ import annotations

import importlib.machinery
import os
import re
import sys
from collections.abc import Sequence
from typing import NamedTuple


class FoundEntryPoint(NamedTuple):
    """One entry point and the distribution that declares it."""

    group: str
    name: str
    value: str
    distribution: str | None
    version: str | None


class _Unreadable(Exception):
    """Something only ``importlib.metadata`` can read the same way (see the module doc)."""


_SEPARATORS = re.compile(r"[-_.]+")
_LINE_END = re.compile(r"\r\n|\r|\n")
_HEADER = re.compile(r"[\041-\071\073-\176]*:")
"""A header line as the ``email`` parser recognises one (its ``headerRE``)."""


def _normalize(name: str) -> str:
    """``importlib.metadata``'s ``Prepared.normalize``: PEP 503, with ``_`` for ``-``."""
    return _SEPARATORS.sub("-", name).lower().replace("-", "_")


def read_entry_points(path: Sequence[str], prefix: str) -> dict[str, list[FoundEntryPoint]]:
    """The entry points of every group whose name starts with ``prefix`` (``"caliper."``), as
    ``importlib.metadata.entry_points()`` lists them for ``path`` (normally ``sys.path``):
    group → its entry points, in the standard library's order. Groups are absent when no
    distribution declares them.
    """
    try:
        return _read(path, prefix)
    except _Unreadable:
        return _read_with_importlib(path, prefix)


def _read(path: Sequence[str], prefix: str) -> dict[str, list[FoundEntryPoint]]:
    """The fast reader; raises :class:`_Unreadable` where it could differ from the stdlib."""
    if any(_finds_distributions(finder) for finder in sys.meta_path):
        raise _Unreadable("a distribution finder of its own on sys.meta_path")
    found: dict[str, list[FoundEntryPoint]] = {}
    seen: set[str] = set()
    marker = "[" + prefix
    for folder in path:
        for info, name in _metadata_folders(folder):
            if name is None:
                name = _normalize(_header_values(info, ("Name",))[0] or "")
            if name in seen:
                continue
            seen.add(name)
            text = _read_text(os.path.join(info, "entry_points.txt"))
            if not text or marker not in text:
                continue
            points = [p for p in _parse(text) if p[0].startswith(prefix)]
            if not points:
                continue
            display, version = _header_values(info, ("Name", "Version"))
            for group, ep_name, value in points:
                found.setdefault(group, []).append(
                    FoundEntryPoint(group, ep_name, value, display, version)
                )
    return found


def _finds_distributions(finder: object) -> bool:
    """Whether a ``sys.meta_path`` finder adds distributions beyond the path finder's."""
    if not hasattr(finder, "find_distributions"):
        return False

    return finder is not importlib.machinery.PathFinder


def _metadata_folders(folder: str) -> list[tuple[str, str | None]]:
    """(metadata folder, normalised distribution name or ``None`` = read it from the
    metadata) for every distribution directly in ``folder``, in ``importlib.metadata``'s
    order."""
    try:
        children = os.listdir(folder or ".")
    except OSError:
        if os.path.isfile(folder):
            raise _Unreadable(f"{folder} is a file (a zip archive?)") from None
        return []
    except Exception:
        raise _Unreadable(f"{folder!r} cannot be listed") from None
    base = os.path.basename(folder).lower()
    base_is_egg = base.endswith(".egg")
    infos: dict[str, list[str]] = {}
    eggs: list[str] = []
    for child in children:
        low = child.lower()
        if low.endswith((".dist-info", ".egg-info")):
            key = _normalize(low.rpartition(".")[0].partition("-")[0])
            infos.setdefault(key, []).append(child)
        elif base_is_egg and low == "egg-info":
            eggs.append(child)
    found: list[tuple[str, str | None]] = []
    for members in infos.values():
        for child in members:
            # the name importlib.metadata deduplicates by: from the folder's own name when
            # it ends exactly in .dist-info/.egg-info (case-sensitive), else from its METADATA
            stem, ext = os.path.splitext(child)
            name = _normalize(stem.partition("-")[0]) if ext in (".dist-info", ".egg-info") else ""
            found.append((os.path.join(folder, child), name or None))
    found += [(os.path.join(folder, child), None) for child in eggs]
    return found


def _read_text(file: str) -> str | None:
    """A metadata file's text, or ``None`` where ``importlib.metadata`` finds none."""
    try:
        with open(file, encoding="utf-8") as handle:
            return handle.read()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
        return None


def _parse(text: str) -> list[tuple[str, str, str]]:
    """``(group, name, value)`` of an ``entry_points.txt``, as ``importlib.metadata``'s
    ``Sectioned`` parser reads it."""
    points = []
    group = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line.strip("[]")
            continue
        if group is None:
            continue
        if "=" not in line:
            raise _Unreadable("an entry point line without '='")  # the stdlib raises
        name, _, value = line.partition("=")
        points.append((group, name.strip(), value.strip()))
    return points


def _header_values(info: str, names: tuple[str, ...]) -> list[str | None]:
    """The first value of each header ``names`` in the folder's ``METADATA`` (``PKG-INFO``,
    or a file named as the folder, for egg-info), read as the ``email`` parser reads it."""
    text = None
    for candidate in ("METADATA", "PKG-INFO", ""):
        text = _read_text(os.path.join(info, candidate) if candidate else info)
        if text is not None:
            break
    values: dict[str, str] = {}
    wanted = {name.lower() for name in names}
    current: str | None = None
    for line in _LINE_END.split(text or ""):
        if not line:
            break  # the headers end at the first empty line
        if line[0] in " \t":
            if current is not None:
                raise _Unreadable("a folded Name or Version header")
            continue
        if not _HEADER.match(line) or line.startswith("From "):
            raise _Unreadable("a METADATA line the email parser reads its own way")
        key, _, value = line.partition(":")
        key = key.lower()
        current = None
        if key in wanted and key not in values:
            values[key] = value.lstrip(" \t")
            current = key
    return [values.get(name.lower()) for name in names]


def _read_with_importlib(path: Sequence[str], prefix: str) -> dict[str, list[FoundEntryPoint]]:
    """The same answer, from ``importlib.metadata`` itself (the slow, general way)."""
    from importlib import metadata

    found: dict[str, list[FoundEntryPoint]] = {}
    about: dict[int, tuple[str | None, str | None]] = {}
    saved = sys.path
    try:
        sys.path = list(path)
        everything = metadata.entry_points()
        groups = sorted(group for group in everything.groups if group.startswith(prefix))
        for group in groups:
            for ep in everything.select(group=group):
                dist = getattr(ep, "dist", None)
                if id(dist) not in about:
                    about[id(dist)] = (None, None) if dist is None else (dist.name, dist.version)
                found.setdefault(group, []).append(
                    FoundEntryPoint(group, ep.name, ep.value, *about[id(dist)])
                )
    finally:
        sys.path = saved
    return found
