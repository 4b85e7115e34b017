"""Entry-point module of the pi backend: the backend, its skill installer, its MCP translator."""

from __future__ import annotations

from collections.abc import Callable

import caliper
from caliper.backend import Backend, CliUpdate, McpTranslator, SkillInstaller
from caliper_backend_pi.backend import PiBackend
from caliper_backend_pi.installer import PiSkillInstaller
from caliper_backend_pi.mcp import PiMcpTranslator


@caliper.hookimpl
def register_backends(register: Callable[[Backend], None]) -> None:
    """Register the ``pi`` backend."""
    register(PiBackend())


@caliper.hookimpl
def register_skill_installers(register: Callable[[SkillInstaller], None]) -> None:
    """Register the installer that puts skills in pi's agent dir."""
    register(PiSkillInstaller())


@caliper.hookimpl
def register_mcp_translators(register: Callable[[McpTranslator], None]) -> None:
    """Register the translator that writes a spec's MCP servers as pi's ``mcp.json``."""
    register(PiMcpTranslator())


@caliper.hookimpl
def cli_update_info(backend: Backend, check_latest: bool) -> CliUpdate | None:
    """Installed and newest pi versions (npm), for ``caliper update-cli``."""
    if not isinstance(backend, PiBackend):
        return None
    from caliper_backend_pi.version import update_info

    return update_info(backend.id, backend.find_cli(), check_latest)
