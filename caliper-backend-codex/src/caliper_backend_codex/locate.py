"""Where the ``codex`` executable is looked for, in order.

1. ``$CODEX_CLI_PATH`` (an explicit choice always wins; a wrong path is reported, not skipped);
2. the binary bundled inside the Codex desktop app (macOS only: no Linux or Windows app bundle
   location is known to us), so users of the app test against the agent they actually use;
3. ``codex`` on PATH (the npm package ``@openai/codex``).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

OVERRIDE_VARIABLE = "CODEX_CLI_PATH"
APP_BUNDLE_BINARY = Path("Contents/Resources/codex")
APP_LOCATIONS = (Path("/Applications/Codex.app"),)


def app_binaries(home: Path, platform: str = sys.platform) -> list[Path]:
    """Candidate desktop-app binaries for this platform (existing or not)."""
    if platform != "darwin":
        return []
    apps = [*APP_LOCATIONS, home / "Applications" / "Codex.app"]
    return [app / APP_BUNDLE_BINARY for app in apps]


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_codex(
    environ: Mapping[str, str] | None = None, *, platform: str = sys.platform
) -> Path | None:
    """The codex binary to run, or ``None`` when there is none (see the module docstring)."""
    env = os.environ if environ is None else environ
    override = env.get(OVERRIDE_VARIABLE)
    if override:
        path = Path(override).expanduser()
        return path if path.exists() else None
    home = Path(env.get("HOME") or Path.home())
    for candidate in app_binaries(home, platform):
        if _executable(candidate):
            return candidate
    found = shutil.which("codex", path=env.get("PATH"))
    return Path(found) if found else None


def is_app_binary(path: Path) -> bool:
    """Whether ``path`` lies inside a Codex desktop app bundle (which updates itself)."""
    return any(part.endswith(".app") for part in path.parts) and path.name == "codex"
