"""The installed judges for ``caliper validate``, loaded without stevedore or pluggy.

Validate needs the judge objects (their task keys and ``validate`` methods) and nothing
else of the plugin machinery, which costs more to import than the judges themselves. Where a
judge plugin is of the ordinary kind, :func:`load_judges` imports its module and calls its
``register_judges(register)`` hook itself, exactly as :class:`caliper.host.plugins.PluginHost`
would through stevedore and pluggy: the same entry points (``CALIPER_LOAD_PLUGINS`` and the
test-only groups included), the same registration order and calling order, the same
failures recorded for a module that does not import or a hook that raises, and the same
error for two plugins claiming one key.

"The ordinary kind" is a plain module whose only ``@caliper.hookimpl`` is a module-level
function ``register_judges(register)`` with pluggy's default options. Anything else (a
hook wrapper, ``tryfirst``, another hook, an odd signature, a class as the plugin, two
distributions declaring one name) is pluggy's to decide: :func:`load_judges` then returns
``None`` and the caller uses a ``PluginHost``. ``tests/core/test_direct_judges.py`` checks
both ways give the same judges and failures.
"""

from __future__ import annotations

import importlib
import re
import types
from typing import TYPE_CHECKING, Any

from caliper.host.plugins import (
    JUDGES,
    LoadFailure,
    PluginEntry,
    declared_twice,
    describe,
    index_registered,
    installed,
    listed,
    load_failure_text,
)
from caliper.plugin.markers import IMPL_ATTRIBUTE

if TYPE_CHECKING:
    from caliper.plugin.judge import Judge

HOOK = "register_judges"

_ENTRY_POINT_VALUE = r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"
"""``importlib.metadata.EntryPoint.pattern``: ``module``, ``module:attr.attr``, extras."""

_DEFAULT_OPTIONS = {
    "wrapper": False,
    "hookwrapper": False,
    "optionalhook": False,
    "tryfirst": False,
    "trylast": False,
    "specname": None,
}


class _NeedsPluggy(Exception):
    """The plugin is not of the ordinary kind (see the module doc)."""


def load_judges() -> tuple[dict[str, Judge], list[LoadFailure]] | None:
    """The installed judges by task key and the judge plugins that failed to load, as
    ``PluginHost().judges()`` and its ``failures`` give them; ``None`` when a plugin needs
    pluggy itself to say (then nothing has been called, though modules may be imported)."""
    entries = installed(JUDGES)
    if declared_twice(entries):
        return None
    by_namespace: dict[str, list[PluginEntry]] = {}
    for entry in entries:
        by_namespace.setdefault(entry.namespace or JUDGES, []).append(entry)
    failures: list[LoadFailure] = []
    hooks: list[tuple[str, types.FunctionType, PluginEntry]] = []  # in registration order
    registered: set[int] = set()
    for namespace, namespace_entries in by_namespace.items():
        # stevedore imports in the metadata's order, then registers in the names' order
        loaded: dict[str, Any] = {}
        for entry in _in_metadata_order(namespace, namespace_entries):
            try:
                loaded[entry.name] = _load(entry.module)
            except _NeedsPluggy:
                return None
            except (KeyboardInterrupt, AssertionError):
                raise  # as stevedore does
            except Exception as exc:
                failures.append(LoadFailure(entry, load_failure_text(exc)))
        for entry in namespace_entries:
            if entry.name not in loaded:
                continue
            plugin = loaded[entry.name]
            if id(plugin) in registered:
                continue  # pluggy registers a plugin object once
            try:
                hook = _the_hook(plugin)
            except _NeedsPluggy:
                return None
            registered.add(id(plugin))
            if hook is not None:
                hooks.append((f"{JUDGES}:{entry.name}", hook, entry))
    answers: list[tuple[str, list[Any]]] = []
    labels = {name: describe(entry) for name, _, entry in hooks}
    for name, hook, entry in reversed(hooks):  # pluggy calls the last registered first
        found: list[Any] = []
        try:
            hook(found.append)
        except Exception as exc:  # a broken plugin must not break the others
            failures.append(LoadFailure(entry, load_failure_text(exc)))
            continue
        answers.append((name, found))
    judges = index_registered(JUDGES, answers, labels.__getitem__)
    return {key: judge for key, (judge, _plugin) in judges.items()}, failures


def _in_metadata_order(namespace: str, entries: list[PluginEntry]) -> list[PluginEntry]:
    """``entries`` (all of one namespace) in the order the installed metadata lists them."""
    wanted = {entry.name: entry for entry in entries}
    return [wanted[e.name] for e in listed(namespace, JUDGES) if wanted.get(e.name) == e]


def _load(value: str) -> Any:
    """What an entry point's value names, as ``importlib.metadata.EntryPoint.load`` finds it."""
    if all(part.isidentifier() for part in value.split(".")):
        return importlib.import_module(value)  # a module's dotted name (the usual case)
    match = re.match(_ENTRY_POINT_VALUE, value)
    if match is None:
        raise _NeedsPluggy(value)
    found: Any = importlib.import_module(match.group("module"))
    for attribute in filter(None, (match.group("attr") or "").split(".")):
        found = getattr(found, attribute)
    return found


def _the_hook(plugin: Any) -> types.FunctionType | None:
    """The plugin's ``register_judges(register)`` (``None`` when it implements no hook);
    raises :class:`_NeedsPluggy` for anything but the ordinary kind."""
    if type(plugin) is not types.ModuleType or "__dir__" in vars(plugin):
        raise _NeedsPluggy("not a plain module")
    hook = None
    for name, value in vars(plugin).items():
        options = _marked_options(value)
        if options is None:
            continue
        if name != HOOK or options != _DEFAULT_OPTIONS or not _takes_register_only(value):
            raise _NeedsPluggy(f"{name} is for pluggy to register")
        hook = value
    return hook


def _marked_options(value: Any) -> Any:
    """The hookimpl options ``value`` carries, itself or through ``__func__`` (as pluggy
    looks for them), or ``None``."""
    for holder in (value, getattr(value, "__func__", None)):
        try:
            options = getattr(holder, IMPL_ATTRIBUTE, None)
        except Exception as exc:
            raise _NeedsPluggy("an attribute that cannot be read") from exc
        if options is not None:
            return options
    return None


def _takes_register_only(value: Any) -> bool:
    """Whether ``value`` is a plain function of exactly one argument named ``register``."""
    if type(value) is not types.FunctionType:
        return False
    code = value.__code__
    return (
        code.co_argcount == 1
        and code.co_kwonlyargcount == 0
        and code.co_posonlyargcount == 0
        and not code.co_flags & 0x0C  # no *args, no **kwargs
        and code.co_varnames[:1] == ("register",)
        and not value.__defaults__
    )
