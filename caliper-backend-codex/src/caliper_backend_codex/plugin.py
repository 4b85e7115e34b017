"""Caliper plugin module for the OpenAI Codex CLI: backend, skill installer, MCP translator.

The implementation modules are imported inside the hooks, so listing plugins stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import caliper

if TYPE_CHECKING:
    from caliper.backend import Backend, CliUpdate, McpTranslator, SkillInstaller

BACKEND_ID = "codex"


@caliper.hookimpl
def register_backends(register: Callable[[Backend], None]) -> None:
    from caliper_backend_codex.backend import CodexBackend

    register(CodexBackend())


@caliper.hookimpl
def register_skill_installers(register: Callable[[SkillInstaller], None]) -> None:
    from caliper_backend_codex.skills import CodexSkillInstaller

    register(CodexSkillInstaller())


@caliper.hookimpl
def register_mcp_translators(register: Callable[[McpTranslator], None]) -> None:
    from caliper_backend_codex.mcp import CodexMcpTranslator

    register(CodexMcpTranslator())


@caliper.hookimpl
def cli_update_info(backend: Backend, check_latest: bool) -> CliUpdate | None:
    if backend.id != BACKEND_ID:
        return None
    from caliper_backend_codex.versions import update_info

    return update_info(backend, check_latest)
