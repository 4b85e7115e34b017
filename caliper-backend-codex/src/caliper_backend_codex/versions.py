"""Which ``codex`` is installed and which is the newest on npm.

``codex --version`` writes into its CODEX_HOME, so it always runs with a throw-away HOME and
CODEX_HOME, never the user's.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from caliper.backend import Backend, CliUpdate
from caliper.process import run_process
from caliper_backend_codex.locate import is_app_binary

NPM_PACKAGE = "@openai/codex"
UPDATE_COMMAND = f"npm install -g {NPM_PACKAGE}@latest"
VERSION_TIMEOUT = 20.0
NPM_TIMEOUT = 30.0
_VERSION = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?")


def parse_version(text: str) -> str | None:
    """The first ``X.Y.Z`` in ``text`` (``codex --version`` prints ``codex-cli 0.171.0``)."""
    match = _VERSION.search(text)
    return match.group(0) if match else None


def installed_version(cli: Path) -> str | None:
    """Run ``codex --version`` in a throw-away home; ``None`` if it fails or hangs."""
    with tempfile.TemporaryDirectory(prefix="caliper-codex-version-") as home:
        codex_home = Path(home) / ".codex"
        codex_home.mkdir()
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": home,
            "CODEX_HOME": str(codex_home),
            "TMPDIR": home,
            "LC_ALL": "C.UTF-8",
        }
        result = run_process(
            [str(cli), "--version"], env=env, cwd=Path(home), timeout=VERSION_TIMEOUT
        )
    if result.returncode != 0:
        return None
    return parse_version(result.stdout)


def latest_version() -> tuple[str | None, str | None]:
    """The newest published version from ``npm view``, or ``(None, why not)``."""
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm was not found on PATH, so the newest version is unknown."
    with tempfile.TemporaryDirectory(prefix="caliper-npm-view-") as cwd:
        result = run_process(
            [npm, "view", NPM_PACKAGE, "version"],
            env=dict(os.environ),
            cwd=Path(cwd),
            timeout=NPM_TIMEOUT,
        )
    version = parse_version(result.stdout) if result.returncode == 0 else None
    if version is None:
        reason = "timed out" if result.timed_out else (result.stderr_tail(2) or "no answer")
        return None, f"Could not ask npm for the newest version ({reason})."
    return version, None


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
    latest, note = latest_version() if check_latest else (None, None)
    if info.version is None:
        missing = "Codex is not installed or did not answer --version."
        note = " ".join(filter(None, [missing, note]))
    return CliUpdate(
        backend=backend.id,
        installed=info.version,
        latest=latest,
        update_command=UPDATE_COMMAND,
        note=note,
    )
