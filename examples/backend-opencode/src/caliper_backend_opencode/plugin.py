"""The hooks: hand caliper the opencode backend, skill installer and MCP translator."""

from __future__ import annotations

import caliper
from caliper_backend_opencode.backend import (
    OpencodeBackend,
    OpencodeMcpTranslator,
    OpencodeSkillInstaller,
)


@caliper.hookimpl
def register_backends(register):  # type: ignore[no-untyped-def]
    """Called when caliper loads backends: the ``opencode`` backend."""
    register(OpencodeBackend())


@caliper.hookimpl
def register_skill_installers(register):  # type: ignore[no-untyped-def]
    """Called when a run installs skills: where opencode discovers them."""
    register(OpencodeSkillInstaller())


@caliper.hookimpl
def register_mcp_translators(register):  # type: ignore[no-untyped-def]
    """Called when a spec has ``mcp:`` servers: opencode's ``mcp`` config block."""
    register(OpencodeMcpTranslator())
