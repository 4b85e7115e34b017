"""The options of commands that run attempts (``run``, ``tune``): ``--model``, ``--workers``,
``--timeout``, and the ``Seconds`` type they use. Each command keeps its own help text."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click

from caliper.runner.run.options import DEFAULT_TIMEOUT, DEFAULT_WORKERS

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


class Seconds(click.FloatRange):
    """A positive, finite number of seconds (``inf``/``nan`` would be saved as invalid JSON
    and would never time out)."""

    name = "number of seconds"

    def __init__(self) -> None:
        super().__init__(min=0, min_open=True)

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None):
        """``value`` as seconds, or a usage error (exit 2) for ``inf``/``nan``/``0``/``-1``."""
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite number of seconds.", param, ctx)
        return seconds


def model_option(help: str, *, multiple: bool = False) -> Decorator:
    """``--model TARGET``: the engine that runs the attempts (grammar: docs/engines.md);
    ``multiple``: repeatable (``caliper run``'s engine matrix)."""
    return click.option("--model", metavar="TARGET", multiple=multiple, help=help)


def workers_option(help: str) -> Decorator:
    """``--workers N``: attempts running at the same time (at least 1)."""
    return click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=DEFAULT_WORKERS,
        show_default=True,
        help=help,
    )


def timeout_option(help: str) -> Decorator:
    """``--timeout SECONDS``: the time budget of one attempt."""
    return click.option(
        "--timeout",
        type=Seconds(),
        default=DEFAULT_TIMEOUT,
        show_default=True,
        metavar="SECONDS",
        help=help,
    )
