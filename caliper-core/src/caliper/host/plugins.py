"""Finding, loading and listing plugins.

Discovery reads entry-point metadata only (no imports), once per process, so ``caliper
--help`` and ``caliper validate`` stay fast whatever is installed. Plugins are imported by
name, through stevedore, only when a command needs them; one that fails to import is recorded in
``PluginHost.failures`` and never breaks the others.

``CALIPER_LOAD_PLUGINS`` (comma-separated entry-point names) limits which installed plugins
load at all; set it to an empty string to load none but those passed explicitly. The
built-in judges of caliper-core (``assert``, ``activates``, ``tools``) always load.

stevedore's on-disk entry-point cache (``~/.cache/python-entrypoints``) is never read: the
entry points come from package metadata, which discovery scans anyway, so a corrupt or stale
cache file cannot hide a plugin or break a command. The metadata is read by
:mod:`caliper.host.entry_points` (the same answer as ``importlib.metadata``, without importing it).

Test-only plugins (such as the ``fake`` backend of Caliper's own suite) declare their entry
points in the ``caliper.testing.*`` groups instead (``caliper.testing.backends``, ...). Those are
read only when ``CALIPER_TEST_PLUGINS=1`` (a test suite's conftest sets it), so they never show
in ``caliper plugins``, ``--version``, ``update-cli`` or a run of a checkout.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from caliper import PROJECT_NAME
from caliper.errors import CaliperError, UsageError
from caliper.host.entry_points import read_entry_points
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from importlib import metadata

    import pluggy

    from caliper.host.entry_points import FoundEntryPoint
    from caliper.plugin.backend import Backend, McpTranslator, SkillInstaller
    from caliper.plugin.executor import Executor
    from caliper.plugin.judge import Judge

BACKENDS = "caliper.backends"
SKILL_INSTALLERS = "caliper.skill_installers"
MCP_TRANSLATORS = "caliper.mcp_translators"
JUDGES = "caliper.judges"
EXECUTORS = "caliper.executors"
BACKEND_ALIASES = "caliper.backend_aliases"
"""Extra names for backends: ``alias = <the backend's plugin module>`` (:func:`backend_names`)."""
GROUPS = (BACKENDS, SKILL_INSTALLERS, MCP_TRANSLATORS, JUDGES, EXECUTORS)

CORE_DISTRIBUTION = "caliper-core"
"""The distribution whose plugins are built in (:func:`is_builtin`)."""

TEST_PLUGINS_ENV = "CALIPER_TEST_PLUGINS"
"""Set to ``1`` to also read the test-only groups (:func:`testing_group`)."""

_HOOK_FOR_GROUP = {
    BACKENDS: "register_backends",
    SKILL_INSTALLERS: "register_skill_installers",
    MCP_TRANSLATORS: "register_mcp_translators",
    JUDGES: "register_judges",
    EXECUTORS: "register_executors",
}
_ID_ATTRIBUTE = {
    BACKENDS: "id",
    SKILL_INSTALLERS: "id",
    MCP_TRANSLATORS: "id",
    JUDGES: "key",
    EXECUTORS: "id",
}

_HOOKS_HINT = "The hooks a plugin can implement are listed in docs/plugins/hooks.md."


@attrs_classes.frozen
class PluginEntry:
    """An installed plugin as its entry point describes it (nothing imported)."""

    group: str
    name: str
    module: str
    distribution: str | None
    version: str | None
    namespace: str | None = None
    """The entry-point group it was read from, when not ``group`` (its test-only twin)."""


@attrs_classes.frozen
class LoadFailure:
    """A plugin that could not be imported or registered, and why."""

    entry: PluginEntry
    error: str


def describe(entry: PluginEntry) -> str:
    """A plugin as a message names it: ``plugin 'codex' (caliper-backend-codex, module m)``."""
    where = ", ".join(x for x in (entry.distribution, f"module {entry.module}") if x)
    return f"plugin {entry.name!r} ({where})"


def _allowed_names() -> set[str] | None:
    raw = os.environ.get("CALIPER_LOAD_PLUGINS")
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


def testing_group(group: str) -> str:
    """A group's test-only twin: ``caliper.backends`` → ``caliper.testing.backends``."""
    return group.replace("caliper.", "caliper.testing.", 1)


def testing_plugins_enabled() -> bool:
    """Whether the test-only groups are read (``CALIPER_TEST_PLUGINS=1``)."""
    return os.environ.get(TEST_PLUGINS_ENV) == "1"


def _entry_points(namespace: str) -> list[metadata.EntryPoint]:
    """One group's entry points as ``importlib.metadata`` objects (what stevedore loads),
    from the single metadata scan per process and ``sys.path``."""
    from importlib import metadata

    found = _scan(tuple(sys.path)).get(namespace, ())
    return [metadata.EntryPoint(ep.name, ep.value, namespace) for ep in found]


@functools.lru_cache(maxsize=8)
def _scan(path: tuple[str, ...]) -> dict[str, list[FoundEntryPoint]]:
    """Every ``caliper.*`` entry point of the installed packages, read once (a command asks
    for several groups). Keyed by ``sys.path``, so a folder added to it is scanned;
    :func:`rescan` forgets what was read."""
    return read_entry_points(path, "caliper.")


@functools.lru_cache(maxsize=64)
def _entries_in(path: tuple[str, ...], namespace: str, group: str) -> tuple[PluginEntry, ...]:
    """``namespace``'s entry points as :class:`PluginEntry` (read as ``group``)."""
    return tuple(
        PluginEntry(
            group=group,
            name=ep.name,
            module=ep.value,
            distribution=ep.distribution,
            version=ep.version,
            namespace=None if namespace == group else namespace,
        )
        for ep in _scan(path).get(namespace, ())
    )


def listed(namespace: str, group: str) -> tuple[PluginEntry, ...]:
    """``namespace``'s entry points (read as ``group``) in the order the installed metadata
    lists them (the order stevedore imports them in), unfiltered."""
    return _entries_in(tuple(sys.path), namespace, group)


def rescan() -> None:
    """Forget the entry points read so far (after installing a package in this process)."""
    _scan.cache_clear()
    _entries_in.cache_clear()


def _read_entries(group: str) -> list[PluginEntry]:
    """Every entry point in ``group`` (and its test-only twin when enabled), unfiltered."""
    namespaces = [group, testing_group(group)] if testing_plugins_enabled() else [group]
    path = tuple(sys.path)
    entries = [entry for ns in namespaces for entry in _entries_in(path, ns, group)]
    return sorted(entries, key=lambda e: e.name)


def installed(group: str) -> list[PluginEntry]:
    """Entry points in ``group``, from package metadata only. Honours CALIPER_LOAD_PLUGINS
    (which never leaves out the built-ins, :func:`is_builtin`).

    With ``CALIPER_TEST_PLUGINS=1`` the group's test-only twin is read as well.
    """
    allowed = _allowed_names()
    return [
        e for e in _read_entries(group) if allowed is None or e.name in allowed or is_builtin(e)
    ]


def is_builtin(entry: PluginEntry) -> bool:
    """Whether a plugin ships inside caliper-core (the ``assert`` and ``activates`` judges).

    Built-ins are part of the spec format, so ``CALIPER_LOAD_PLUGINS`` never leaves them out.
    """
    return entry.distribution == CORE_DISTRIBUTION


def declared_twice(entries: Iterable[PluginEntry]) -> dict[str, list[PluginEntry]]:
    """The names more than one entry point declares (two distributions, or a name in both a
    group and its test-only twin), each with every entry declaring it."""
    by_name: dict[str, list[PluginEntry]] = {}
    for entry in entries:
        by_name.setdefault(entry.name, []).append(entry)
    return {name: found for name, found in by_name.items() if len(found) > 1}


def clash_message(entries: Sequence[PluginEntry]) -> str:
    """The load failure of a name that several distributions declare, naming each."""
    entries = sorted(entries, key=lambda e: (e.distribution or "", e.module))
    kind = entries[0].group.split(".")[-1][:-1]
    who = " and ".join(
        f"{e.distribution or '?'}{f' {e.version}' if e.version else ''} (module {e.module})"
        for e in entries
    )
    return (
        f"{len(entries)} distributions declare the {kind} {entries[0].name!r}: {who}, so "
        "none of them is loaded. Uninstall all but one."
    )


def backend_names() -> dict[str, str]:
    """Every name that picks an installed backend, mapped to its id, from metadata alone.

    An id maps to itself. An alias is an entry point in ``caliper.backend_aliases`` whose
    name is the alias and whose value is the module of the backend it names: the one entry
    of the same distribution in ``caliper.backends`` with that module (an alias that matches
    none, or several, or that two distributions declare, is ignored; an id always wins over
    an alias). Aliases of backends that ``CALIPER_LOAD_PLUGINS`` leaves out are left out
    with them. Nothing is imported.
    """
    backends = installed(BACKENDS)
    table = {entry.name: entry.name for entry in backends}
    aliases = _read_entries(BACKEND_ALIASES)
    ambiguous = declared_twice(aliases)
    for alias in (a for a in aliases if a.name not in ambiguous):
        targets = [
            entry.name
            for entry in backends
            if entry.module == alias.module
            and entry.distribution == alias.distribution
            and (entry.namespace is None) == (alias.namespace is None)
        ]
        if len(targets) == 1:
            table.setdefault(alias.name, targets[0])
    return table


def index_registered(
    group: str,
    answers: Iterable[tuple[str, list[Any]]],
    label: Callable[[str], str],
) -> dict[str, tuple[Any, str]]:
    """Map each registered object's id (``key`` for judges) → (object, plugin name), from
    ``(plugin name, objects it registered)`` in calling order. Objects without an id are
    skipped; two different objects claiming one id are an error naming both plugins
    (``label`` names a plugin)."""
    attribute = _ID_ATTRIBUTE[group]
    found: dict[str, tuple[Any, str]] = {}
    for plugin_name, registered in answers:
        for obj in registered:
            ident = getattr(obj, attribute, None)
            if not ident:
                continue
            if ident in found and found[ident][0] is not obj:
                raise CaliperError(
                    f"Two plugins claim the {group.split('.')[-1][:-1]} id {ident!r}: "
                    f"{label(found[ident][1])} and {label(plugin_name)}.",
                    hint="Uninstall one of them (see `caliper plugins`).",
                    exit_code=2,
                )
            found[ident] = (obj, plugin_name)
    return found


def load_failure_text(exc: BaseException) -> str:
    """How a plugin's exception is recorded in a :class:`LoadFailure`."""
    return f"{type(exc).__name__}: {exc}"


@functools.cache
def _metadata_extension_manager() -> type:
    """stevedore's ``NamedExtensionManager`` listing entry points from package metadata
    instead of stevedore's on-disk cache (which a corrupt file there would break).

    Built once per process, on first use (stevedore is imported only when a plugin loads).
    """
    from stevedore import NamedExtensionManager

    class MetadataNamedExtensionManager(NamedExtensionManager):  # type: ignore[misc]
        """Loads named plugins; the entry points are read from package metadata."""

        def list_entry_points(self) -> list[metadata.EntryPoint]:
            """This namespace's entry points, from installed packages' metadata."""
            return _entry_points(self.namespace)

    return MetadataNamedExtensionManager


def make_plugin_manager() -> pluggy.PluginManager:
    """A fresh plugin manager with Caliper's hook specs (a factory, never a global)."""
    import pluggy

    from caliper.plugin import hookspecs

    manager = pluggy.PluginManager(PROJECT_NAME)
    manager.add_hookspecs(hookspecs)
    return manager


class PluginHost:
    """Loads plugins on demand and collects the objects their hooks register.

    ``extra_plugins`` are plugin objects (modules or instances) registered directly, as tests
    do; with ``use_entry_points=False`` nothing installed is loaded.
    """

    def __init__(self, extra_plugins: Iterable[Any] = (), *, use_entry_points: bool = True):
        self.manager = make_plugin_manager()
        self.use_entry_points = use_entry_points
        self.failures: list[LoadFailure] = []
        self._loaded: set[tuple[str, str]] = set()
        self._entries: dict[str, PluginEntry] = {}
        """The entry point of each plugin loaded from one, by its registered name."""
        self._cache: dict[str, dict[str, tuple[Any, str]]] = {}
        for plugin in extra_plugins:
            self._register_module(plugin, name=getattr(plugin, "__name__", None))

    # -- loading -------------------------------------------------------------------------
    def _register_module(
        self, module: Any, name: str | None, entry: PluginEntry | None = None
    ) -> None:
        """Register a plugin object; one that implements an unknown hook is refused.

        An injected plugin (``entry`` is ``None``) is refused with a :class:`UsageError`; one
        loaded from an entry point is recorded in :attr:`failures` and left unregistered, so
        it is an error only when a command needs it.
        """
        if self.manager.is_registered(module):
            return
        label = f"plugin {name!r}" if entry is None else describe(entry)
        problem = self._register_checked(module, name, label)
        if problem is not None:
            if entry is None:
                raise UsageError(problem, hint=_HOOKS_HINT)
            self.failures.append(LoadFailure(entry, problem))
        self._cache.clear()

    def _register_checked(self, module: Any, name: str | None, label: str) -> str | None:
        """Register ``module`` and run pluggy's checks (arguments, ``check_pending``); on a
        problem, leave it unregistered and return what is wrong, naming plugin and hook."""
        import pluggy

        try:
            self.manager.register(module, name=name)
        except pluggy.PluginValidationError as exc:
            return f"{label} does not match caliper's hooks: {exc}"
        try:
            self.manager.check_pending()
        except pluggy.PluginValidationError:
            import difflib

            unknown = self._unknown_hooks(module)
            self.manager.unregister(module)
            known = sorted(self._hook_names())
            close = difflib.get_close_matches(unknown[0], known, n=1) if unknown else []
            suggestion = f" (did you mean {close[0]!r}?)" if close else ""
            return (
                f"{label} implements {', '.join(map(repr, unknown))}, which is not a caliper "
                f"hook{suggestion}, so it is not loaded."
            )
        return None

    def _hook_names(self) -> list[str]:
        """The hooks caliper declares (the specs in :mod:`caliper.plugin.hookspecs`)."""
        return [
            n for n, c in vars(self.manager.hook).items() if not n.startswith("_") and c.has_spec()
        ]

    def _unknown_hooks(self, module: Any) -> list[str]:
        """The hooks ``module`` implements that have no spec (pluggy's ``check_pending``)."""
        return sorted(
            n
            for n, caller in vars(self.manager.hook).items()
            if not n.startswith("_")
            and not caller.has_spec()
            and any(i.plugin is module and not i.optionalhook for i in caller.get_hookimpls())
        )

    def load(self, group: str, names: Sequence[str] | None = None) -> None:
        """Import the plugins of ``group`` (all, or only ``names``) and register them."""
        if not self.use_entry_points:
            return
        listed = installed(group)
        entries = {e.name: e for e in listed}
        wanted = [n for n in (names if names is not None else entries) if n in entries]
        wanted = [n for n in wanted if (group, n) not in self._loaded]
        clashes = declared_twice(listed)
        for name in [n for n in wanted if n in clashes]:
            # neither is loaded: which one would win depends on the order of sys.path
            self.failures.append(LoadFailure(entries[name], clash_message(clashes[name])))
            self._loaded.add((group, name))
        wanted = [n for n in wanted if n not in clashes]
        if not wanted:
            return

        def on_failure(_manager: Any, entrypoint: Any, exc: BaseException) -> None:
            entry = entries.get(entrypoint.name)
            if entry is not None:
                self.failures.append(LoadFailure(entry, load_failure_text(exc)))

        by_namespace: dict[str, list[str]] = {}
        for name in wanted:
            by_namespace.setdefault(entries[name].namespace or group, []).append(name)
        manager_class = _metadata_extension_manager()
        for namespace, names_here in by_namespace.items():
            extensions = manager_class(
                namespace=namespace,
                names=names_here,
                invoke_on_load=False,
                on_load_failure_callback=on_failure,
                name_order=True,
            )
            for extension in extensions:
                name = f"{group}:{extension.name}"
                self._entries[name] = entries[extension.name]
                self._register_module(extension.plugin, name=name, entry=entries[extension.name])
        self._loaded.update((group, n) for n in wanted)

    # -- collecting -----------------------------------------------------------------------
    def _call_each(self, group: str) -> list[tuple[str, list[Any]]]:
        """Call ``group``'s register hook through pluggy, one plugin at a time, in its order.

        Each call goes through ``manager.subset_hook_caller`` (the hook with every other
        implementing plugin removed), so pluggy's ordering (``tryfirst``/``trylast``), its
        tracing and hook-call monitoring, its argument checks and any ``wrapper`` around the
        hook all apply. One call per plugin, rather than one call for all, is what keeps a
        broken plugin from breaking the others: pluggy stops the whole chain at the first
        exception (a failure-catching wrapper would see it only after the plugins still to
        be called had been skipped), so the exception is caught here, per plugin, and
        recorded in :attr:`failures`. Returns ``(plugin name, objects it registered)``.
        """
        hook_name = _HOOK_FOR_GROUP[group]
        hook = getattr(self.manager.hook, hook_name)
        # pluggy calls its implementations from the end of this list to the start
        callers = [
            impl
            for impl in reversed(hook.get_hookimpls())
            if not (impl.wrapper or impl.hookwrapper)
        ]
        implementing = [impl.plugin for impl in callers]
        answers: list[tuple[str, list[Any]]] = []
        for impl in callers:
            others = [plugin for plugin in implementing if plugin is not impl.plugin]
            call = self.manager.subset_hook_caller(hook_name, remove_plugins=others)
            registered: list[Any] = []
            try:
                call(register=registered.append)
            except Exception as exc:  # a broken plugin must not break the others
                self.failures.append(
                    LoadFailure(self._entry_of(impl, group), load_failure_text(exc))
                )
                continue
            answers.append((impl.plugin_name, registered))
        return answers

    def _entry_of(self, impl: Any, group: str) -> PluginEntry:
        """The entry point a hook implementation came from (a stand-in for injected ones)."""
        entry = self._entries.get(impl.plugin_name)
        if entry is not None:
            return attrs.evolve(entry, group=group)
        return PluginEntry(group, impl.plugin_name, str(impl.plugin), None, None)

    def _label(self, plugin_name: str) -> str:
        """A registered plugin as a message names it (with its distribution, when known)."""
        entry = self._entries.get(plugin_name)
        return describe(entry) if entry is not None else f"plugin {plugin_name!r}"

    def _collect(self, group: str) -> dict[str, tuple[Any, str]]:
        """Call the group's register hook on every registered plugin; map id → (obj, plugin)."""
        if group in self._cache:
            return self._cache[group]
        found = index_registered(group, self._call_each(group), self._label)
        self._cache[group] = found
        return found

    def backends(self, names: Sequence[str] | None = None) -> dict[str, Backend]:
        """Backends by id; loads only ``names`` when given (all installed otherwise)."""
        self.load(BACKENDS, names)
        return {k: v[0] for k, v in self._collect(BACKENDS).items()}

    def backend_names(self) -> dict[str, str]:
        """Every name that picks a backend → its id: :func:`backend_names` (metadata, nothing
        imported) plus the ids and ``aliases`` of backends already loaded (injected ones)."""
        table = backend_names() if self.use_entry_points else {}
        for ident, (backend, _plugin) in self._collect(BACKENDS).items():
            table.setdefault(ident, ident)
            for alias in backend.aliases:
                table.setdefault(alias, ident)
        return table

    def judges(self) -> dict[str, Judge]:
        """Every installed judge, by the task key it owns."""
        self.load(JUDGES)
        return {k: v[0] for k, v in self._collect(JUDGES).items()}

    def executors(self, names: Sequence[str] | None = None) -> dict[str, Executor]:
        """Executors by id; loads only ``names`` when given (all installed otherwise)."""
        self.load(EXECUTORS, names)
        return {k: v[0] for k, v in self._collect(EXECUTORS).items()}

    def skill_installer(self, backend_id: str) -> SkillInstaller | None:
        """The skill installer serving ``backend_id``, or ``None``."""
        self.load(SKILL_INSTALLERS, [backend_id])
        found = self._collect(SKILL_INSTALLERS).get(backend_id)
        return found[0] if found else None

    def mcp_translator(self, backend_id: str) -> McpTranslator | None:
        """The MCP translator serving ``backend_id``, or ``None``."""
        self.load(MCP_TRANSLATORS, [backend_id])
        found = self._collect(MCP_TRANSLATORS).get(backend_id)
        return found[0] if found else None

    def call_first(self, hook_name: str, **kwargs: Any) -> Any:
        """Call a ``firstresult`` hook (e.g. ``cli_update_info``) on the loaded plugins."""
        hook: Callable[..., Any] = getattr(self.manager.hook, hook_name)
        return hook(**kwargs)

    def plugin_name_of(self, group: str, ident: str) -> str | None:
        """Which registered plugin provided ``ident`` in ``group``."""
        found = self._collect(group).get(ident)
        return found[1] if found else None
