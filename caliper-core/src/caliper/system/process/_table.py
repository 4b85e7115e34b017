"""Reading the process table (``/proc``): each process's parent, state, start time and marker."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

from caliper.system import attrs_classes
from caliper.system.process._registry import PROC, TAG_VARIABLE, _adopting


# -- finding descendants ----------------------------------------------------------------------
@attrs_classes.frozen
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
