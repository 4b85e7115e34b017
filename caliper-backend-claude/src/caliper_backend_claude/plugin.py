"""Caliper plugin module for Claude Code: registers the backend, skill installer and MCP translator.

Imports of the implementation modules happen inside the hooks, so listing plugins stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import caliper

if TYPE_CHECKING:
    from caliper.plugin.backend import Backend, McpTranslator, SkillInstaller


@caliper.hookimpl
def register_backends(register: Callable[[Backend], None]) -> None:
    """Register the ``claude-code`` backend (alias ``claude``)."""
    from caliper_backend_claude.backend import ClaudeCodeBackend

    register(ClaudeCodeBackend())


@caliper.hookimpl
def register_skill_installers(register: Callable[[SkillInstaller], None]) -> None:
    """Register the installer that puts skills in ``<HOME>/.claude/skills``."""
    from caliper_backend_claude.skills import ClaudeSkillInstaller

    register(ClaudeSkillInstaller())


@caliper.hookimpl
def register_mcp_translators(register: Callable[[McpTranslator], None]) -> None:
    """Register the translator that writes a ``--mcp-config`` file."""
    from caliper_backend_claude.mcp import ClaudeMcpTranslator

    register(ClaudeMcpTranslator())
