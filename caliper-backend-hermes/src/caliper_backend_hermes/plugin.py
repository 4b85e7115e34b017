"""Caliper plugin module for Hermes Agent: registers the backend, its skill installer and its
MCP translator, and answers ``caliper update-cli`` for it."""

from __future__ import annotations

from collections.abc import Callable

import caliper
from caliper.backend import Backend, CliUpdate, McpTranslator, SkillInstaller
from caliper_backend_hermes.backend import HermesBackend
from caliper_backend_hermes.mcp import HermesMcpTranslator
from caliper_backend_hermes.skills import HermesSkillInstaller

UPDATE_NOTE = "Hermes updates itself: run `hermes update` (caliper does not update it)."


@caliper.hookimpl
def register_backends(register: Callable[[Backend], None]) -> None:
    """Register the ``hermes`` backend."""
    register(HermesBackend())


@caliper.hookimpl
def register_skill_installers(register: Callable[[SkillInstaller], None]) -> None:
    """Register the installer that puts skills in the attempt's ``$HERMES_HOME/skills``."""
    register(HermesSkillInstaller())


@caliper.hookimpl
def register_mcp_translators(register: Callable[[McpTranslator], None]) -> None:
    """Register the translator that writes ``mcp_servers`` into the attempt's config."""
    register(HermesMcpTranslator())


@caliper.hookimpl
def cli_update_info(backend: Backend, check_latest: bool) -> CliUpdate | None:
    """Report the installed Hermes version; Hermes updates itself, so caliper only reports.

    ``check_latest`` is ignored: asking PyPI is what ``hermes update`` does, not caliper.
    """
    if backend.id != HermesBackend.id:
        return None
    info = backend.cli_info()
    return CliUpdate(
        backend=backend.id,
        installed=info.version,
        latest=None,
        update_command="hermes update",
        self_updating=True,
        note=UPDATE_NOTE if info.found else info.error,
    )
