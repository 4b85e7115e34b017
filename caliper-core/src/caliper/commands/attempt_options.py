"""The options of commands that run or judge attempts (``run``, ``tune``, ``retry``,
``regrade``): ``--model``, ``--workers``, ``--timeout``, ``--judge-model``, ``--judge-timeout``,
``--retries``, ``--force``, and the ``Seconds`` type they use. Each command keeps its own help
text."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import click

from caliper.runner.run.options import DEFAULT_RETRIES, DEFAULT_TIMEOUT, DEFAULT_WORKERS

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


def workers_option(help: str, *, default: int | None = DEFAULT_WORKERS) -> Decorator:
    """``--workers N``: attempts running at the same time (at least 1); ``default=None``
    leaves the choice to the command (``retry``: the parent run's), shown by no default."""
    return click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=default,
        show_default=default is not None,
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


def judge_model_option(help: str) -> Decorator:
    """``--judge-model TARGET``: the engine of LLM judges (``expect:``)."""
    return click.option("--judge-model", metavar="TARGET", help=help)


def judge_timeout_option(help: str) -> Decorator:
    """``--judge-timeout SECONDS``: the time budget of one judge call (default ``None``: the
    command decides)."""
    return click.option(
        "--judge-timeout",
        type=Seconds(),
        default=None,
        metavar="SECONDS",
        help=help,
    )


def retries_option(help: str) -> Decorator:
    """``--retries N``: more tries (0 to 10) of an attempt after a transient failure."""
    return click.option(
        "--retries",
        type=click.IntRange(min=0, max=10),
        default=DEFAULT_RETRIES,
        show_default=True,
        metavar="N",
        help=help,
    )


def force_option(help: str) -> Decorator:
    """``--force``: continue a saved run even though what it was made from changed."""
    return click.option("--force", is_flag=True, help=help)
