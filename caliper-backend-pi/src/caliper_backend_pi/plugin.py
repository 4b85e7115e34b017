"""Entry-point module of the pi backend: the backend, its skill installer, its MCP translator.

The implementation modules are imported inside the hooks, so listing plugins stays cheap.
``caliper update-cli`` asks the backend itself (``PiBackend.update_info``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import caliper

if TYPE_CHECKING:
    from caliper.plugin.backend import Backend, McpTranslator, SkillInstaller


@caliper.hookimpl
def register_backends(register: Callable[[Backend], None]) -> None:
    """Register the ``pi`` backend."""
    from caliper_backend_pi.backend import PiBackend

    register(PiBackend())


@caliper.hookimpl
def register_skill_installers(register: Callable[[SkillInstaller], None]) -> None:
    """Register the installer that puts skills in pi's agent dir."""
    from caliper_backend_pi.skills import PiSkillInstaller

    register(PiSkillInstaller())


@caliper.hookimpl
def register_mcp_translators(register: Callable[[McpTranslator], None]) -> None:
    """Register the translator that writes a spec's MCP servers as pi's ``mcp.json``."""
    from caliper_backend_pi.mcp import PiMcpTranslator

    register(PiMcpTranslator())
