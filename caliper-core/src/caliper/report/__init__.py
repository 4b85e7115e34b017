"""Rendering saved runs with rich: pure functions that take data and a ``Console``."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

PIPE_WIDTH = 140


def make_console() -> Console:
    """A console for command output: the terminal's width, or a roomy fixed width when the
    output goes to a pipe or file (where nothing wraps it again)."""
    from rich.console import Console

    console = Console()
    if not console.is_terminal:
        console = Console(width=PIPE_WIDTH)
    return console
