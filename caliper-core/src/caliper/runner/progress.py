"""Live progress while attempts run: one line per task, redrawn on stderr.

Shown only when stderr is a terminal; in CI logs and pipes the run stays quiet until the
final report. Drawn on :func:`caliper.report.make_console`'s console, so a task name cannot
drive the terminal.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console
from rich.live import Live
from rich.table import Table

from caliper.report import make_console

if TYPE_CHECKING:
    from typing_extensions import Self

    from caliper.results.models import AttemptRecord
    from caliper.spec.model import Task


class _Counts:
    """One line's counters: attempts done of k, pass, fail, unusable, aborted."""

    def __init__(self, k: int):
        self.k = k
        self.done = self.passed = self.failed = self.unusable = self.other = 0
        self.aborted = False

    def add(self, record: AttemptRecord) -> None:
        self.done += 1
        if record.outcome.usable:
            if record.outcome.value == "pass":
                self.passed += 1
            else:
                self.failed += 1
        elif record.outcome.unusable:
            self.unusable += 1
        else:
            self.other += 1


class LiveCounts:
    """Counter lines drawn live with rich, one per key (the key's parts are the first columns).

    The table is built when it is drawn (4 times a second), never per attempt: a run of many
    tasks would otherwise rebuild every row after each of its attempts. Subclasses say what a
    line's key is (:class:`Progress`: the task; a matrix run's progress: engine and task).
    """

    key_columns: tuple[str, ...] = ("task",)

    def __init__(
        self, keys: Sequence[tuple[str, ...]], k: int, *, console: Console | None, title: str
    ):
        self.console = console or make_console(stderr=True)
        self.enabled = self.console.is_terminal
        self.title = title
        self._lines = {key: _Counts(k) for key in keys}
        self._lock = threading.Lock()
        self._live: Live | None = None

    def _table(self) -> Table:
        table = Table(title=self.title or None, box=None, show_edge=False, pad_edge=False)
        for column in (*self.key_columns, "attempts", "pass", "fail", "unusable"):
            table.add_column(column, justify="left" if column in self.key_columns else "right")
        for key, line in self._lines.items():
            done = f"{line.done}/{line.k}" + (" aborted" if line.aborted else "")
            table.add_row(*key, done, str(line.passed), str(line.failed), str(line.unusable))
        return table

    def __enter__(self) -> Self:
        if self.enabled:
            self._live = Live(
                console=self.console,
                refresh_per_second=4,
                transient=True,
                get_renderable=self._locked_table,
            )
            self._live.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.__exit__(exc_type, exc, tb)
            self._live = None

    def _count(self, key: tuple[str, ...], record: AttemptRecord) -> None:
        with self._lock:
            self._lines[key].add(record)

    def _abort(self, key: tuple[str, ...]) -> None:
        with self._lock:
            self._lines[key].aborted = True

    def _locked_table(self) -> Table:
        with self._lock:
            return self._table()


class Progress(LiveCounts):
    """Per-task counters (attempts done/k, pass, fail, unusable) drawn with rich."""

    def __init__(
        self, tasks: Sequence[Task], k: int, *, console: Console | None = None, title: str = ""
    ):
        super().__init__([(task.name,) for task in tasks], k, console=console, title=title)

    def attempt_done(self, record: AttemptRecord) -> None:
        """Count a finished attempt (the live display redraws on its own clock)."""
        self._count((record.task_name,), record)

    def task_aborted(self, name: str) -> None:
        """Mark a task stopped by ``--fail-fast``."""
        self._abort((name,))
