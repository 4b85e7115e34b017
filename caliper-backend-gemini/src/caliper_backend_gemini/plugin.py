"""Caliper plugin module for the Google Gemini CLI: backend, skill installer, MCP translator.

The implementation modules are imported inside the hooks, so listing plugins stays cheap.
``caliper update-cli`` asks the backend itself (``GeminiBackend.update_info``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import caliper

if TYPE_CHECKING:
    from caliper.plugin.backend import Backend, McpTranslator, SkillInstaller


@caliper.hookimpl
def register_backends(register: Callable[[Backend], None]) -> None:
    from caliper_backend_gemini.backend import GeminiBackend

    register(GeminiBackend())


@caliper.hookimpl
def register_skill_installers(register: Callable[[SkillInstaller], None]) -> None:
    from caliper_backend_gemini.skills import GeminiSkillInstaller

    register(GeminiSkillInstaller())


@caliper.hookimpl
def register_mcp_translators(register: Callable[[McpTranslator], None]) -> None:
    from caliper_backend_gemini.mcp import GeminiMcpTranslator

    register(GeminiMcpTranslator())
