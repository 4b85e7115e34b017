"""Choosing the executor of a run and its limits: ``--executor``, ``--<id>-<name>``,
``--max-concurrent BACKEND=N``.

Executor plugins are imported only here, for ``caliper run`` (never for ``caliper --help``).
The built-in ``local`` executor is always available, even when ``CALIPER_LOAD_PLUGINS``
leaves its entry point out or a :class:`~caliper.host.plugins.PluginHost` loads no entry points.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from caliper.errors import UsageError

if TYPE_CHECKING:
    from caliper.host.plugins import PluginHost
    from caliper.plugin.executor import Executor
    from caliper.runner.run.prepare import PreparedRun

LOCAL = "local"


def _builtin_local() -> Executor:
    from caliper.default_plugins.local_executor import LocalExecutor

    return LocalExecutor()


def available_executors(host: PluginHost) -> dict[str, Executor]:
    """Every executor the host can provide, ``local`` always among them."""
    found = dict(host.executors())
    found.setdefault(LOCAL, _builtin_local())
    return found


def installed_executor_ids() -> list[str]:
    """The ids of installed executors from entry-point metadata (nothing imported), with
    ``local`` always first."""
    from caliper.host.plugins import EXECUTORS, installed

    names = [entry.name for entry in installed(EXECUTORS) if entry.name != LOCAL]
    return [LOCAL, *sorted(set(names))]


def resolve_executor(host: PluginHost, executor_id: str) -> Executor:
    """The executor ``--executor ID`` names (only that plugin is imported).

    An unknown id is a :class:`UsageError` (exit 2) listing the installed executors, with
    the closest one.
    """
    found = host.executors([executor_id]).get(executor_id)
    if found is not None:
        return found
    if executor_id == LOCAL:
        return _builtin_local()
    known = sorted(available_executors(host))
    raise unknown_executor(executor_id, known)


def unknown_executor(executor_id: str, known: Iterable[str]) -> UsageError:
    """The one message for an ``--executor`` nobody provides."""
    known = list(known)
    import difflib

    close = difflib.get_close_matches(executor_id, known, n=1, cutoff=0.6)
    ray = ""
    if executor_id == "ray" or (close and close[0] == "ray"):
        from caliper.host.install_hints import add_distribution

        command = add_distribution("caliper-executor-ray")
        ray = f" --executor ray comes with caliper-executor-ray: {command}."
    return UsageError(
        f"--executor {executor_id!r}: no installed executor has that id."
        + (f" Did you mean {close[0]!r}?" if close else ""),
        hint=f"Installed executors: {', '.join(known)}. Executors come from plugins"
        f"{'' if ray else ' (caliper-executor-ray provides --executor ray)'}; `caliper plugins` "
        f"lists them.{ray}",
    )


def executor_settings(executor: Executor, given: Mapping[str, str]) -> dict[str, str]:
    """``given`` (``--<id>-<name>`` values by name) completed with the executor's defaults.

    A name the executor does not declare is a :class:`UsageError` (exit 2).
    """
    declared = {option.name: option for option in executor.options}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        names = ", ".join(f"--{executor.id}-{name}" for name in declared) or "none"
        raise UsageError(
            f"The {executor.id} executor takes no setting {unknown[0]!r}.",
            hint=f"Its settings: {names}.",
        )
    settings = {name: o.default for name, o in declared.items() if o.default is not None}
    settings.update(given)
    return settings


def parse_max_concurrent(values: Iterable[str]) -> dict[str, int]:
    """``--max-concurrent BACKEND=N`` values as a mapping; a malformed one is exit 2."""
    limits: dict[str, int] = {}
    for value in values:
        backend, sep, number = value.partition("=")
        backend = backend.strip()
        try:
            count = int(number.strip())
        except ValueError:
            count = 0
        if not sep or not backend or count < 1:
            raise UsageError(
                f"--max-concurrent {value!r}: expected BACKEND=N with N a whole number of at "
                "least 1.",
                hint="For example --max-concurrent claude-code=2 (repeat it for each backend).",
            )
        limits[backend] = count
    return limits


def concurrency_limits(given: Mapping[str, int], runs: Mapping[str, PreparedRun]) -> dict[str, int]:
    """Per-backend limits for a run: each engine's ``Backend.default_max_concurrent``, then
    ``--max-concurrent`` on top.

    A ``--max-concurrent`` naming a backend that is neither installed nor one of the run's
    is a :class:`UsageError` (exit 2) listing the installed backends.
    """
    from caliper.host.plugins import BACKENDS, installed

    limits: dict[str, int] = {}
    for run in runs.values():
        default = getattr(run.engine.backend, "default_max_concurrent", None)
        if default is not None and default >= 1:
            limits[run.engine.backend_id] = default
    known = {entry.name for entry in installed(BACKENDS)}
    known.update(run.engine.backend_id for run in runs.values())
    alias_of = {
        alias: run.engine.backend_id
        for run in runs.values()
        for alias in getattr(run.engine.backend, "aliases", ())
    }
    resolved: dict[str, int] = {}
    for backend, count in given.items():
        backend = alias_of.get(backend, backend)
        resolved[backend] = count
        if backend not in known:
            import difflib

            close = difflib.get_close_matches(backend, sorted(known), n=1, cutoff=0.6)
            raise UsageError(
                f"--max-concurrent {backend}=…: no installed backend has that id."
                + (f" Did you mean {close[0]!r}?" if close else ""),
                hint=f"Installed backends: {', '.join(sorted(known)) or 'none'}.",
            )
    limits.update(resolved)
    return limits
