"""Which ``claude`` is installed (the newest is asked of npm by ``Backend.npm_update_info``)."""

from __future__ import annotations

from pathlib import Path

from caliper.plugin.cli_versions import version_from_cli
from caliper_backend_claude.home import QUIET_SWITCHES

NPM_PACKAGE = "@anthropic-ai/claude-code"


def installed_version(cli: Path) -> str | None:
    """``claude --version`` with a throw-away HOME and the quiet switches."""
    return version_from_cli(cli, extra_env=lambda _home: QUIET_SWITCHES)
