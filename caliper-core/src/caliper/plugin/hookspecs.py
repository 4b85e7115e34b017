"""The hooks a Caliper plugin can implement.

A plugin is a plain module with functions decorated ``@caliper.hookimpl`` and named after the
specs below. It is found through an entry point in one group per kind (``caliper.backends``,
``caliper.skill_installers``, ``caliper.mcp_translators``, ``caliper.judges``,
``caliper.executors``); the entry-point name is the public id of what it provides (extra
names for a backend go in ``caliper.backend_aliases``). Register hooks receive a ``register``
callable and call it once per object; they return nothing.

The core calls every hook through pluggy (``tryfirst``/``trylast``, wrappers and tracing
apply), a register hook once per plugin so one that raises cannot hide the others, and checks
each plugin with ``check_pending()``: a function marked ``@caliper.hookimpl`` whose name is
not one of these specs (a misspelt ``register_backend``) keeps the plugin from loading, with
an error naming the plugin and the hook (``optionalhook=True`` opts out). See
docs/plugins/hooks.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from caliper.plugin.backend import Backend, CliUpdate, McpTranslator, SkillInstaller
    from caliper.plugin.executor import Executor
    from caliper.plugin.judge import Judge

hookspec = pluggy.HookspecMarker("caliper")


@hookspec
def register_backends(register: Callable[[Backend], None]) -> None:
    """Register agent backends.

    Called once when the core needs backends: to run attempts, to resolve ``--model`` and
    ``--judge-model``, and for ``caliper plugins``. Call ``register(backend)`` with an instance
    of a :class:`caliper.plugin.backend.Backend` subclass for each backend the plugin provides. The
    backend's ``id`` must equal the plugin's entry-point name in ``caliper.backends``.

    Since 0.1.
    """


@hookspec
def register_skill_installers(register: Callable[[SkillInstaller], None]) -> None:
    """Register skill installers.

    Called before the first attempt of a run on a backend. Call ``register(installer)`` with a
    :class:`caliper.plugin.backend.SkillInstaller` whose ``id`` is the backend id it serves; the
    installer copies the neighbourhood to where that agent discovers skills inside the attempt's
    isolated home.

    Since 0.1.
    """


@hookspec
def register_mcp_translators(register: Callable[[McpTranslator], None]) -> None:
    """Register MCP translators.

    Called when a spec declares ``mcp:`` servers and the run's backend honours MCP. Call
    ``register(translator)`` with a :class:`caliper.plugin.backend.McpTranslator` whose ``id`` is
    the backend id it serves; it turns resolved servers into the agent's native config.

    Since 0.1.
    """


@hookspec
def register_judges(register: Callable[[Judge], None]) -> None:
    """Register judges, each owning one task key.

    Called by ``caliper validate`` (to know which task keys exist) and by the runner. Call
    ``register(judge)`` with a :class:`caliper.plugin.judge.Judge` whose ``key`` equals the plugin's
    entry-point name in ``caliper.judges``. A task key with no installed judge is a spec error.

    Since 0.1.
    """


@hookspec
def register_executors(register: Callable[[Executor], None]) -> None:
    """Register executors: where a run's attempts are carried out.

    Called when ``caliper run`` starts (and by ``caliper plugins``). Call
    ``register(executor)`` with a :class:`caliper.plugin.executor.Executor` whose ``id`` equals the
    plugin's entry-point name in ``caliper.executors``; ``caliper run --executor ID`` picks it
    (the built-in ``local`` executor is the default).

    Since 1.1.
    """


@hookspec(firstresult=True)
def cli_update_info(backend: Backend, check_latest: bool) -> CliUpdate | None:
    """Report a backend's installed CLI version, the newest one and how to update.

    Called by ``caliper update-cli`` once per installed backend. Return a
    :class:`caliper.plugin.backend.CliUpdate` for a backend your plugin provides and ``None`` for
    any other. When ``check_latest`` is false, do not touch the network (leave ``latest`` empty).
    The first non-``None`` answer wins. The core asks the backend's own
    :meth:`caliper.plugin.backend.Backend.update_info` first and calls this hook only when that
    returns ``None``: new plugins override the method; this hook keeps older plugins working.

    Since 0.1.
    """
