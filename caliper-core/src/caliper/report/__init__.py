"""Rendering saved runs with rich: pure functions that take data and a ``Console``."""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

from caliper.system.textsafe import printable

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


@functools.cache
def _safe_console_class() -> type[Console]:
    """A rich ``Console`` that never lets printed text drive the terminal (built lazily, so
    importing this package does not import rich)."""
    from rich.console import Console
    from rich.segment import Segment

    class SafeConsole(Console):
        """Strips escape sequences and control characters from everything it prints.

        Task names, agent output, stderr tails and reasons come from outside; printed raw, an
        ``ESC ]0;…BEL`` would retitle the terminal and ``ESC [2J`` clear it. Plain strings are
        cleaned before layout (``render_str``), and every rendered segment once more, so a
        ``Text`` built by a view is covered too. Rich's own styling and cursor control (its
        control segments) are untouched.
        """

        def render_str(self, text: str, **kwargs: Any) -> Any:
            """Clean ``text``, then let rich parse markup and highlight as usual."""
            return super().render_str(printable(text), **kwargs)

        def render(self, renderable: Any, options: Any = None) -> Any:
            """Rich's segments with their text cleaned (control segments kept as they are)."""
            for segment in super().render(renderable, options):
                if segment.control or not segment.text:
                    yield segment
                else:
                    text = printable(segment.text)
                    yield segment if text == segment.text else Segment(text, segment.style)

    return SafeConsole


def make_console(*, stderr: bool = False) -> Console:
    """A console for command output (``stderr`` for progress): the terminal's width, or
    ``$COLUMNS`` when set, or a roomy fixed width when the output goes to a pipe or file
    (where nothing wraps it again). What it prints cannot drive the terminal (escape
    sequences and control characters are removed)."""
    console_class = _safe_console_class()
    console = console_class(stderr=stderr)
    if not console.is_terminal:
        console = console_class(stderr=stderr, width=_columns_from_env() or PIPE_WIDTH)
    return console
