"""``caliper run``'s executor flags: ``--executor ID``, the chosen executor's own
``--<id>-<name> VALUE`` settings, and ``--max-concurrent BACKEND=N``.

The settings an executor declares (:class:`caliper.plugin.executor.ExecutorOption`) become flags of
``caliper run`` only once ``run`` parses its arguments and sees ``--executor ID``: only then
is that one executor plugin imported, so ``caliper --help`` and the other commands never
import executors.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import click

from caliper.runner.run.executors import LOCAL, resolve_executor

F = TypeVar("F", bound=Callable[..., Any])

SETTING_PREFIX = "executor_setting__"
"""Prefix of the parameter names the executor's own flags are parsed into."""
NAMES_KEY = "caliper.executor_setting_names"
"""``click.Context.meta`` key: parameter name → the executor's setting name."""


def _peek_executor(args: Sequence[str]) -> str:
    """The ``--executor`` value among ``args`` (the last one wins, as click does)."""
    found = LOCAL
    items = list(args)
    for index, arg in enumerate(items):
        if arg == "--":
            break
        if arg == "--executor" and index + 1 < len(items):
            found = items[index + 1]
        elif arg.startswith("--executor="):
            found = arg.split("=", 1)[1]
    return found


def _setting_param(name: str) -> str:
    return SETTING_PREFIX + re.sub(r"\W", "_", name)


class ExecutorCommand(click.Command):
    """A command that grows the flags of the executor ``--executor`` names before parsing."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Add ``--<id>-<name>`` for the chosen executor's settings, then parse as usual."""
        executor_id = _peek_executor(args)
        self.params = [p for p in self.params if not (p.name or "").startswith(SETTING_PREFIX)]
        names: dict[str, str] = {}
        ctx.meta[NAMES_KEY] = names
        if executor_id != LOCAL and not ctx.resilient_parsing:
            from caliper.host.plugins import PluginHost

            executor = resolve_executor(PluginHost(), executor_id)
            for option in executor.options:
                names[_setting_param(option.name)] = option.name
                self.params.append(
                    click.Option(
                        [f"--{executor.id}-{option.name}", _setting_param(option.name)],
                        metavar="VALUE",
                        default=None,
                        help=f"(--executor {executor.id}) {option.help}"
                        + (f" [default: {option.default}]" if option.default is not None else ""),
                    )
                )
        return super().parse_args(ctx, args)


def executor_options(function: F) -> F:
    """``--executor`` and ``--max-concurrent`` (kept together, in this one decorator)."""
    function = click.option(
        "--max-concurrent",
        "max_concurrent",
        multiple=True,
        metavar="BACKEND=N",
        help="At most N attempts of BACKEND at the same time (repeatable), so one provider's "
        "rate limit does not starve the others. Default: the backend's own limit, if it "
        "declares one; --workers always limits the total.",
    )(function)
    function = click.option(
        "--executor",
        "executor",
        default=LOCAL,
        show_default=True,
        metavar="ID",
        help="Where attempts run: 'local' (--workers threads here) or an installed executor "
        "plugin (e.g. ray). Its settings are flags named --ID-SETTING.",
    )(function)
    return function


def settings_from(params: dict[str, Any]) -> dict[str, str]:
    """Pop the executor's ``--<id>-<name>`` values out of a command's keyword arguments,
    keyed by the setting names the executor declared."""
    names: dict[str, str] = click.get_current_context().meta.get(NAMES_KEY, {})
    settings: dict[str, str] = {}
    for key in [k for k in params if k.startswith(SETTING_PREFIX)]:
        value = params.pop(key)
        if value is not None:
            settings[names.get(key, key[len(SETTING_PREFIX) :])] = value
    return settings
