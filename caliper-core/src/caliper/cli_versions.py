"""Reading an agent CLI's installed version and asking npm for the newest one.

Shared by backends for ``Backend.cli_version`` and the ``cli_update_info`` hook. The CLI always
runs with a throw-away HOME (some CLIs write into their home even for ``--version``), and the
npm query is bounded so ``caliper update-cli`` never hangs without a network.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path

from caliper.process import run_process

VERSION_TIMEOUT = 20.0
NPM_TIMEOUT = 30.0
_VERSION = re.compile(r"\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?")


def parse_version(text: str) -> str | None:
    """The first ``X.Y.Z`` (with any pre-release or build suffix) in ``text``."""
    match = _VERSION.search(text)
    return match.group(0) if match else None


def version_from_cli(
    cli: Path,
    *,
    extra_env: Callable[[Path], Mapping[str, str]] | None = None,
    timeout: float = VERSION_TIMEOUT,
) -> str | None:
    """Run ``CLI --version`` in a throw-away HOME; ``None`` if it fails, hangs or says nothing.

    ``extra_env`` receives that HOME and returns variables to add (e.g. a config folder inside
    it, or switches that keep the CLI quiet).
    """
    with tempfile.TemporaryDirectory(prefix="caliper-cli-version-") as home:
        env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "HOME": home,
            "TMPDIR": home,
            "LC_ALL": "C.UTF-8",
        }
        if extra_env is not None:
            env.update(extra_env(Path(home)))
        result = run_process([str(cli), "--version"], env=env, cwd=Path(home), timeout=timeout)
    if result.returncode != 0:
        return None
    return parse_version(result.stdout) or parse_version(result.stderr)


def npm_latest_version(
    package: str, *, timeout: float = NPM_TIMEOUT
) -> tuple[str | None, str | None]:
    """The newest published version of an npm package, or ``(None, why it is unknown)``."""
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm was not found on PATH, so the newest version is unknown."
    with tempfile.TemporaryDirectory(prefix="caliper-npm-view-") as cwd:
        result = run_process(
            [npm, "view", package, "version", "--fetch-retries=0", "--fetch-timeout=15000"],
            env=dict(os.environ),
            cwd=Path(cwd),
            timeout=timeout,
        )
    version = parse_version(result.stdout) if result.returncode == 0 else None
    if version is None:
        reason = "timed out" if result.timed_out else (result.stderr_tail(2) or "no answer")
        return None, f"Could not ask npm for the newest version ({reason})."
    return version, None
