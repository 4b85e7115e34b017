"""Caliper plugin module for Hermes Agent: registers the backend, its skill installer and its
MCP translator.

The implementation modules are imported inside the hooks, so listing plugins stays cheap.
``caliper update-cli`` asks the backend itself (``HermesBackend.update_info``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import caliper

if TYPE_CHECKING:
    from caliper.plugin.backend import Backend, McpTranslator, SkillInstaller


@caliper.hookimpl
def register_backends(register: Callable[[Backend], None]) -> None:
    """Register the ``hermes`` backend."""
    from caliper_backend_hermes.backend import HermesBackend

    register(HermesBackend())


@caliper.hookimpl
def register_skill_installers(register: Callable[[SkillInstaller], None]) -> None:
    """Register the installer that puts skills in the attempt's ``$HERMES_HOME/skills``."""
    from caliper_backend_hermes.skills import HermesSkillInstaller

    register(HermesSkillInstaller())


@caliper.hookimpl
def register_mcp_translators(register: Callable[[McpTranslator], None]) -> None:
    """Register the translator that writes ``mcp_servers`` into the attempt's config."""
    from caliper_backend_hermes.mcp import HermesMcpTranslator

    register(HermesMcpTranslator())
