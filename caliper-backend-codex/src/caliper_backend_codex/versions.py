"""Which ``codex`` is installed and which is the newest on npm.

``codex --version`` writes into its CODEX_HOME, so it always runs with a throw-away HOME and
CODEX_HOME, never the user's.
"""

from __future__ import annotations

from pathlib import Path

from caliper.plugin.backend import Backend, CliUpdate
from caliper.plugin.cli_versions import version_from_cli
from caliper_backend_codex.locate import is_app_binary

NPM_PACKAGE = "@openai/codex"


def _codex_home(home: Path) -> dict[str, str]:
    codex_home = home / ".codex"
    codex_home.mkdir()
    return {"CODEX_HOME": str(codex_home)}


def installed_version(cli: Path) -> str | None:
    """``codex --version`` with a throw-away HOME and CODEX_HOME."""
    return version_from_cli(cli, extra_env=_codex_home)


def update_info(backend: Backend, check_latest: bool) -> CliUpdate:
    """Installed vs newest, and how to update (the desktop app updates its own binary)."""
    info = backend.cli_info()
    if info.path is not None and is_app_binary(info.path):
        return CliUpdate(
            backend=backend.id,
            installed=info.version,
            latest=None,
            update_command=None,
            self_updating=True,
            note=f"Using the Codex app's own binary ({info.path}); the app updates it.",
        )
    return backend.npm_update_info(NPM_PACKAGE, check_latest)
