"""Live progress of a matrix run: one line per engine and task, redrawn on stderr.

Like :class:`caliper.runner.progress.Progress` (shown only when stderr is a terminal, drawn on
a console that strips escape sequences), with the engine as the first column.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from types import TracebackType
from typing import TYPE_CHECKING

from caliper.report import make_console

if TYPE_CHECKING:
    from rich.console import Console
    from rich.live import Live
    from rich.table import Table

    from caliper.results.models import AttemptRecord
    from caliper.spec.model import Task


class _Line:
    def __init__(self, k: int) -> None:
        self.k = k
        self.done = self.passed = self.failed = self.unusable = 0
        self.aborted = False

    def add(self, record: AttemptRecord) -> None:
        self.done += 1
        if record.outcome.value == "pass":
            self.passed += 1
        elif record.outcome.usable:
            self.failed += 1
        elif record.outcome.unusable:
            self.unusable += 1


class MatrixProgress:
    """Per-engine, per-task counters (attempts done/k, pass, fail, unusable) drawn with rich."""

    def __init__(
        self,
        engines: Sequence[str],
        tasks: Sequence[Task],
        k: int,
        *,
        console: Console | None = None,
        title: str = "",
    ) -> None:
        self.console = console or make_console(stderr=True)
        self.enabled = self.console.is_terminal
        self.title = title
        self._lines = {(e, t.name): _Line(k) for e in engines for t in tasks}
        self._lock = threading.Lock()
        self._live: Live | None = None

    def _table(self) -> Table:
        from rich.table import Table

        table = Table(title=self.title or None, box=None, show_edge=False, pad_edge=False)
        for column in ("engine", "task", "attempts", "pass", "fail", "unusable"):
            table.add_column(column, justify="left" if column in ("engine", "task") else "right")
        for (engine, task), line in self._lines.items():
            done = f"{line.done}/{line.k}" + (" aborted" if line.aborted else "")
            table.add_row(
                engine, task, done, str(line.passed), str(line.failed), str(line.unusable)
            )
        return table

    def __enter__(self) -> MatrixProgress:
        if self.enabled:
            from rich.live import Live

            # the table is built when it is drawn (4 times a second), never per attempt: a
            # matrix of many tasks would otherwise rebuild every row after each attempt
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

    def attempt_done(self, engine: str, record: AttemptRecord) -> None:
        """Count a finished attempt of ``engine`` (the live display redraws on its own clock)."""
        with self._lock:
            self._lines[(engine, record.task_name)].add(record)

    def task_aborted(self, engine: str, name: str) -> None:
        """Mark a task of ``engine`` stopped by ``--fail-fast``."""
        with self._lock:
            self._lines[(engine, name)].aborted = True

    def _locked_table(self) -> Table:
        with self._lock:
            return self._table()
