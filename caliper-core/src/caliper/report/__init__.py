"""Rendering saved runs with rich: pure functions that take data and a ``Console``."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

PIPE_WIDTH = 140


def _columns_from_env() -> int | None:
    """``$COLUMNS`` as a usable width, or ``None`` when unset or not a positive number."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return None
    return columns if columns > 0 else None


def make_console() -> Console:
    """A console for command output: the terminal's width, or ``$COLUMNS`` when set, or a
    roomy fixed width when the output goes to a pipe or file (where nothing wraps it again)."""
    from rich.console import Console

    console = Console()
    if not console.is_terminal:
        console = Console(width=_columns_from_env() or PIPE_WIDTH)
    return console
