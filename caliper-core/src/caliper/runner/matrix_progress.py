"""Live progress of a matrix run: one line per engine and task, redrawn on stderr.

The same counters and drawing as :class:`caliper.runner.progress.Progress` (shown only when
stderr is a terminal, drawn on a console that strips escape sequences), with the engine as the
first column.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from caliper.runner.progress import LiveCounts

if TYPE_CHECKING:
    from rich.console import Console

    from caliper.results.models import AttemptRecord
    from caliper.spec.model import Task


class MatrixProgress(LiveCounts):
    """Per-engine, per-task counters (attempts done/k, pass, fail, unusable) drawn with rich."""

    key_columns = ("engine", "task")

    def __init__(
        self,
        engines: Sequence[str],
        tasks: Sequence[Task],
        k: int,
        *,
        console: Console | None = None,
        title: str = "",
    ) -> None:
        keys = [(engine, task.name) for engine in engines for task in tasks]
        super().__init__(keys, k, console=console, title=title)

    def attempt_done(self, engine: str, record: AttemptRecord) -> None:
        """Count a finished attempt of ``engine`` (the live display redraws on its own clock)."""
        self._count((engine, record.task_name), record)

    def task_aborted(self, engine: str, name: str) -> None:
        """Mark a task of ``engine`` stopped by ``--fail-fast``."""
        self._abort((engine, name))
