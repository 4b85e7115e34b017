"""A run's journal: every finished attempt, durable the moment it is recorded.

``<root>/results/<spec>/<run-id>.journal.jsonl`` sits beside the run's final
``<run-id>.json``. It is JSON lines:

* line 1, the **header**: ``{"caliper_journal": 1, "meta": {...}, "tasks": [...]}`` — the
  run's metadata as it started and each task without attempts, so a journal alone can be
  reported;
* then one line per finished attempt, ``{"attempt": {...}}``, in the stored form (secrets
  redacted, text capped and written once, exactly as the final file keeps it), and event
  lines such as ``{"event": "aborted", "task": NAME}`` (``--fail-fast`` stopped a task).

Each line is written with one ``write`` before the run goes on, so a ``SIGKILL`` (or any end
of the caliper process) loses at most the attempts in flight. A background thread then flushes
it to disk (``fsync``) at once, one flush for every line written meanwhile (a group commit:
the scheduler never waits for the disk), so a power cut loses at most the lines of the last
few milliseconds; closing the journal flushes what is left. A crash while writing leaves at
most a torn last line: reading tolerates it and says so. While a run is going its process
holds an exclusive ``flock`` on the journal, so a reader can tell a running run from a killed
one.

When the run ends the final results file is assembled from the journal (atomically, as
before) and the journal is removed. A journal that is still there means the run was killed
(or is still running): ``caliper list`` shows it as ``incomplete``, ``report`` and ``compare``
read it as a partial run, ``caliper run --resume`` continues it.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import json
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from caliper.system import attrs_classes

JOURNAL_SUFFIX = ".journal.jsonl"
FORMAT_KEY = "caliper_journal"
FORMAT_VERSION = 1


class JournalError(ValueError):
    """The file is not a readable caliper journal (the message says why)."""


def journal_path(results_file: Path) -> Path:
    """The journal that belongs beside ``results_file`` (``<run-id>.json``)."""
    return results_file.with_name(results_file.name[: -len(".json")] + JOURNAL_SUFFIX)


def results_path(journal: Path) -> Path:
    """The final results file that belongs beside ``journal``."""
    return journal.with_name(journal.name[: -len(JOURNAL_SUFFIX)] + ".json")


def run_id_of(journal: Path) -> str:
    """The run id a journal's file name carries."""
    return journal.name[: -len(JOURNAL_SUFFIX)]


def header(meta: dict[str, Any], tasks: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The first line of a journal: the run's metadata and its tasks (without attempts)."""
    return {
        FORMAT_KEY: FORMAT_VERSION,
        "meta": meta,
        "tasks": [{k: v for k, v in t.items() if k != "attempts"} for t in tasks],
    }


def attempt_key(data: dict[str, Any]) -> tuple[str, int]:
    """``(task name, attempt number)`` of a stored attempt."""
    return (str(data.get("task_name")), int(data.get("attempt") or 0))


def attempt_line(attempt_json: str) -> str:
    """The journal line of an attempt whose stored form is the JSON ``attempt_json`` (made by
    :func:`caliper.results.codec.line`): the same text ``codec.line({"attempt": ...})`` makes."""
    return '{"attempt": ' + attempt_json + "}"


class JournalWriter:
    """Appends lines to an open journal: each is written to the file before :meth:`append`
    returns, and flushed to disk by a background thread right after (see the module docstring).

    Holds an exclusive ``flock`` on the file until :meth:`close` (the process dying releases
    it too). Not thread-safe: the scheduler appends from one thread.
    """

    def __init__(self, path: Path, fd: int):
        self.path = path
        self._fd: int | None = fd
        self._lock = threading.Lock()  # the descriptor, between the flushing thread and close
        self._unflushed = threading.Event()
        self._flush_error: OSError | None = None
        self._flusher: threading.Thread | None = None

    @classmethod
    def create(cls, path: Path, first: dict[str, Any]) -> JournalWriter:
        """Create a new journal at ``path`` (it must not exist) and write its header.

        Raises :class:`FileExistsError` when the name is taken, :class:`OSError` otherwise.
        """
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        writer = cls(path, fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            writer.append(first)
        except BaseException:
            writer.close()
            path.unlink(missing_ok=True)
            raise
        return writer

    @classmethod
    def replace(cls, path: Path, lines: Iterable[dict[str, Any]]) -> JournalWriter:
        """Write a whole new journal (header and lines) over ``path`` atomically, then keep
        it open for appending (used by ``--resume``: a torn line is not carried over)."""
        from caliper.results import codec
        from caliper.system.output_file import OutputWriteError, replace_file

        data = "".join(codec.line(item) + "\n" for item in lines).encode("utf-8")
        try:
            fd = replace_file(
                path,
                data,
                on_open=lambda fd: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB),
                keep_open=True,
            )
        except OutputWriteError as exc:
            cause = exc.__cause__
            raise cause if isinstance(cause, OSError) else OSError(exc.message) from exc
        assert fd is not None
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        # the descriptor was opened without O_APPEND: every later write goes to the end anyway
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_APPEND)
        return cls(path, fd)

    def append(self, item: dict[str, Any]) -> None:
        """Write one JSON line; it is flushed to disk in the background. Raises
        :class:`OSError` when the file cannot be written, or a flush of earlier lines failed."""
        from caliper.results import codec

        self.append_line(codec.line(item))

    def append_line(self, line: str) -> None:
        """Write one line already made by :func:`caliper.results.codec.line` (see
        :meth:`append`)."""
        if self._fd is None:
            raise OSError(f"the journal {self.path} is closed")
        if self._flush_error is not None:
            raise self._flush_error
        data = (line + "\n").encode("utf-8")
        while data:
            data = data[os.write(self._fd, data) :]
        self._unflushed.set()
        if self._flusher is None:
            self._flusher = threading.Thread(
                target=self._flush_loop, name="caliper-journal-flush", daemon=True
            )
            self._flusher.start()

    def _flush_loop(self) -> None:
        """Flush whatever was written since the last flush, until the journal is closed."""
        while True:
            self._unflushed.wait()
            with self._lock:
                if self._fd is None:
                    return
                self._unflushed.clear()
                try:
                    os.fsync(self._fd)
                except OSError as exc:
                    self._flush_error = exc
                    return

    def close(self) -> None:
        """Flush what is left, release the lock and close the file (idempotent)."""
        with self._lock:
            fd, self._fd = self._fd, None
            if fd is not None:
                with contextlib.suppress(OSError):
                    if self._unflushed.is_set():
                        os.fsync(fd)
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._unflushed.set()  # lets the flushing thread see the journal is closed
        flusher = self._flusher
        if flusher is not None and flusher is not threading.current_thread():
            flusher.join(timeout=5)


@attrs_classes.define
class JournalContents:
    """What a journal holds: its header, the finished attempts and the tasks aborted."""

    header: dict[str, Any]
    attempts: list[dict[str, Any]]
    aborted: set[str]
    torn: str | None = None
    """Set when the last line was cut off (a crash mid-write): what was lost, in words."""
    running: bool = False
    """True when a live caliper process still holds the journal (the run is going on)."""

    @property
    def meta(self) -> dict[str, Any]:
        """The run's metadata as the header recorded it."""
        return self.header["meta"]


def is_locked(path: Path) -> bool:
    """True when a live process holds ``path``'s journal lock (the run is still going)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def read_journal(path: Path) -> JournalContents:
    """Read a journal; a torn last line is tolerated (see :attr:`JournalContents.torn`).

    Raises :class:`OSError` when it cannot be read and :class:`JournalError` when it is not a
    journal (no header) or a line other than the last is broken. An attempt recorded twice
    keeps its last line.
    """
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    trailing = lines.pop()  # b"" when the file ends with a newline
    if trailing:
        lines.append(trailing)
    torn: str | None = None
    items: list[Any] = []
    for number, chunk in enumerate(lines, start=1):
        try:
            items.append(json.loads(chunk.decode("utf-8")))
        except (UnicodeDecodeError, json.JSONDecodeError):
            if number == len(lines) and number > 1:
                torn = (
                    f"the journal's last line ({len(chunk):,} bytes, line {number}) was cut off "
                    "when the run stopped, so the attempt it held was lost"
                )
                break
            raise JournalError(f"line {number} of {path} is not valid JSON") from None
    if not items or not isinstance(items[0], dict) or FORMAT_KEY not in items[0]:
        raise JournalError(f"{path} does not start with a caliper journal header")
    first = items[0]
    if not isinstance(first.get("meta"), dict) or not isinstance(first.get("tasks"), list):
        raise JournalError(f"the header of {path} lacks its 'meta' or 'tasks'")
    attempts: dict[tuple[str, int], dict[str, Any]] = {}
    aborted: set[str] = set()
    for item in items[1:]:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("attempt"), dict):
            attempts[attempt_key(item["attempt"])] = item["attempt"]
        elif item.get("event") == "aborted":
            aborted.add(str(item.get("task")))
    return JournalContents(
        header=first,
        attempts=list(attempts.values()),
        aborted=aborted,
        torn=torn,
        running=is_locked(path),
    )


def assemble(
    meta: dict[str, Any],
    tasks: Iterable[dict[str, Any]],
    attempts: Iterable[dict[str, Any]],
    aborted: Iterable[str] = (),
    stop_reasons: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The data of a results file from stored-form attempts (pure; nothing is re-capped).

    Each attempt goes to the task it names, sorted by number; attempts of tasks the header
    does not list are dropped. ``meta`` and ``tasks`` are copied, not changed.
    """
    aborted = set(aborted)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for item in attempts:
        by_task.setdefault(str(item.get("task_name")), []).append(item)
    out_tasks = []
    for task in tasks:
        entry = copy.deepcopy({k: v for k, v in task.items() if k != "attempts"})
        name = entry.get("name")
        entry["attempts"] = sorted(by_task.get(name, []), key=lambda a: a.get("attempt") or 0)
        entry["aborted"] = name in aborted
        if stop_reasons and name in stop_reasons:
            entry["stop_reason"] = stop_reasons[name]
        out_tasks.append(entry)
    return {"meta": copy.deepcopy(meta), "tasks": out_tasks}


def journal_run_data(contents: JournalContents, path: Path) -> dict[str, Any]:
    """A killed (or running) run's data from its journal, marked partial and incomplete."""
    data = assemble(contents.meta, contents.header["tasks"], contents.attempts, contents.aborted)
    meta = data["meta"]
    meta["partial"] = True
    meta["incomplete"] = True
    count = len(contents.attempts)
    if contents.running:
        reason = f"still running ({count} attempts finished so far)"
    else:
        reason = (
            f"incomplete: the run was killed before it finished; its journal holds {count} "
            f"finished attempts (continue it with `caliper run SPEC --resume {run_id_of(path)}`)"
        )
    if contents.torn:
        reason += f"; {contents.torn}"
    meta["stop_reason"] = reason
    return data
