"""Which ``claude`` is installed and which is the newest on npm."""

from __future__ import annotations

from pathlib import Path

from caliper.backend import CliUpdate
from caliper.cli_versions import npm_latest_version, version_from_cli
from caliper_backend_claude.isolation import QUIET_SWITCHES

NPM_PACKAGE = "@anthropic-ai/claude-code"
UPDATE_COMMAND = f"npm install -g {NPM_PACKAGE}@latest"


def installed_version(cli: Path) -> str | None:
    """``claude --version`` with a throw-away HOME and the quiet switches."""
    return version_from_cli(cli, extra_env=lambda _home: QUIET_SWITCHES)


def latest_version() -> tuple[str | None, str | None]:
    """The newest published version from ``npm view``, or ``(None, why not)``."""
    return npm_latest_version(NPM_PACKAGE)


def update_info(installed: str | None, check_latest: bool) -> CliUpdate:
    """Installed vs newest, and the npm command that updates."""
    latest, note = latest_version() if check_latest else (None, None)
    if installed is None:
        note = " ".join(
            filter(None, ["Claude Code is not installed or did not answer --version.", note])
        )
    return CliUpdate(
        backend="claude-code",
        installed=installed,
        latest=latest,
        update_command=UPDATE_COMMAND,
        note=note,
    )
