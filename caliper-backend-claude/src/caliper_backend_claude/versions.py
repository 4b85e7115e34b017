"""Which ``claude`` is installed and which is the newest on npm."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from caliper.backend import CliUpdate
from caliper.process import run_process
from caliper_backend_claude.isolation import QUIET_SWITCHES

NPM_PACKAGE = "@anthropic-ai/claude-code"
UPDATE_COMMAND = f"npm install -g {NPM_PACKAGE}@latest"
VERSION_TIMEOUT = 20.0
NPM_TIMEOUT = 30.0
_VERSION = re.compile(r"\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?")


def parse_version(text: str) -> str | None:
    """The first ``X.Y.Z`` in ``text`` (``claude --version`` prints ``2.1.332 (Claude Code)``)."""
    match = _VERSION.search(text)
    return match.group(0) if match else None


def installed_version(cli: Path) -> str | None:
    """Run ``claude --version`` with a throw-away HOME; ``None`` if it fails or hangs."""
    with tempfile.TemporaryDirectory(prefix="caliper-claude-version-") as home:
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": home,
            "TMPDIR": home,
            "LC_ALL": "C.UTF-8",
            **QUIET_SWITCHES,
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
            [npm, "view", NPM_PACKAGE, "version", "--fetch-retries=0", "--fetch-timeout=15000"],
            env=dict(os.environ),
            cwd=Path(cwd),
            timeout=NPM_TIMEOUT,
        )
    version = parse_version(result.stdout) if result.returncode == 0 else None
    if version is None:
        reason = "timed out" if result.timed_out else (result.stderr_tail(2) or "no answer")
        return None, f"Could not ask npm for the newest version ({reason})."
    return version, None


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
