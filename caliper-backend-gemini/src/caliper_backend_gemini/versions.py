"""Which ``gemini`` is installed and which is the newest on npm.

``gemini --version`` runs with a throw-away home, never the user's.
"""

from __future__ import annotations

from pathlib import Path

from caliper.plugin.backend import Backend, CliUpdate
from caliper.plugin.cli_versions import version_from_cli

NPM_PACKAGE = "@google/gemini-cli"


def _gemini_home(home: Path) -> dict[str, str]:
    return {"GEMINI_CLI_HOME": str(home), "GEMINI_CLI_NO_RELAUNCH": "true"}


def installed_version(cli: Path) -> str | None:
    """``gemini --version`` with a throw-away home."""
    return version_from_cli(cli, extra_env=_gemini_home)


def update_info(backend: Backend, check_latest: bool) -> CliUpdate:
    """Installed vs newest on npm, and the npm command that updates it."""
    return backend.npm_update_info(NPM_PACKAGE, check_latest)
