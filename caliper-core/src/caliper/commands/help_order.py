"""One order of help sections for every command: description, Options (and Commands), then
Examples and Exit codes.

A command may write its Examples and Exit codes in its docstring (click prints those before
the options) or in its ``epilog`` (printed after them). :func:`options_first` moves a
docstring's trailing sections into the epilog, in front of what the epilog already holds, so
``--help`` reads the same way whichever way a command was written.
"""

from __future__ import annotations

import inspect
import re

import click

SECTION_TITLES = ("Typical session", "Examples", "Example", "Exit codes")
_FIRST_SECTION = re.compile(
    r"^[ \t]*\x08[ \t]*\n(?=[ \t]*(?:" + "|".join(SECTION_TITLES) + r"):[ \t]*$)", re.M
)


def options_first(command: click.Command) -> click.Command:
    """Move ``command``'s trailing help sections after its options (and its subcommands')."""
    if getattr(command, "_caliper_help_ordered", False):
        return command
    help_text = command.help or ""
    found = _FIRST_SECTION.search(help_text)
    if found is not None:
        sections = help_text[found.start() :].strip("\n")
        epilog = inspect.cleandoc(command.epilog) if command.epilog else ""
        command.help = help_text[: found.start()].rstrip()
        command.epilog = sections + ("\n\n" + epilog if epilog else "")
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            options_first(sub)
    command._caliper_help_ordered = True  # type: ignore[attr-defined]
    return command
