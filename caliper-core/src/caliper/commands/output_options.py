"""The output options shared by commands that save or show runs: ``--output PATH`` (a copy
of a new run's results: ``run``, ``retry``, ``regrade``), ``--verbose``, and the view options
of ``report`` and ``compare`` (``--format``, ``-o FILE``, ``--matrix ID``). Where the commands
say it differently, each keeps its own help text."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # a type only: importing it at run time would import the run's modules
    from caliper.commands.attempt_options import Decorator

FORMATS = ("text", "json", "markdown", "html")
"""What ``report`` and ``compare`` write with ``--format``."""

TABLE_FORMATS = ("csv", "jsonl")
"""``report``'s extra formats: one run's attempt table (:mod:`caliper.report.attempt_table`)."""


def results_output_option(help: str = "Also save the new run's results JSON to PATH.") -> Decorator:
    """``--output PATH``: also save the results JSON of the run the command makes to PATH."""
    return click.option(
        "--output",
        type=click.Path(path_type=Path, dir_okay=False),
        metavar="PATH",
        help=help,
    )


def verbose_option(help: str = "Show every attempt's outcome and reason.") -> Decorator:
    """``-v/--verbose``: a fuller report."""
    return click.option("--verbose", "-v", is_flag=True, help=help)


def format_option(help: str, formats: tuple[str, ...] = FORMATS) -> Decorator:
    """``--format`` one of ``formats`` (default text), into ``output_format``."""
    return click.option(
        "--format",
        "output_format",
        type=click.Choice(list(formats)),
        default="text",
        show_default=True,
        help=help,
    )


def output_file_option(help: str) -> Decorator:
    """``-o/--output FILE``: where a page or table is written (default: stdout)."""
    return click.option(
        "-o",
        "--output",
        type=click.Path(dir_okay=False, path_type=Path),
        help=help,
    )


page_output_option = output_file_option(
    "With --format html: write the page to FILE instead of stdout."
)
"""``-o/--output FILE``: where ``--format html`` writes its page (default: stdout)."""


def matrix_option(help: str) -> Decorator:
    """``--matrix ID``: show the runs of a matrix (``caliper run`` with several ``--model``),
    into ``matrix_id``; the view is :mod:`caliper.commands.matrix_report`."""
    return click.option("--matrix", "matrix_id", metavar="ID", help=help)
