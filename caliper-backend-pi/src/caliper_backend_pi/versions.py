"""Which pi is installed, and which is the newest on npm.

The installed version is read from the npm package's ``package.json`` next to the ``pi``
script, so nothing is executed. When that file cannot be found (a wrapper script, a
compiled binary), ``pi --version`` runs with a throw-away HOME and pi's offline switches.
The newest version is asked of npm only when the user asks for it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from caliper.plugin import run_process
from caliper.plugin.backend import CliUpdate
from caliper.plugin.cli_versions import version_from_cli
from caliper_backend_pi.home import AGENT_DIR_VARIABLE, OFFLINE_ENV

PACKAGE = "@earendil-works/pi-coding-agent"
OLD_PACKAGE = "@mariozechner/pi-coding-agent"
PACKAGE_NAMES = (PACKAGE, OLD_PACKAGE)
UPDATE_COMMAND = f"npm install -g {PACKAGE}@latest"
VERSION_TIMEOUT = 20.0
NPM_TIMEOUT = 60.0


def _package_json(cli: Path) -> dict[str, Any] | None:
    """The pi package's ``package.json`` found above the resolved CLI script, if any."""
    try:
        start = Path(os.path.realpath(cli))
    except OSError:
        return None
    for folder in list(start.parents)[:4]:
        candidate = folder / "package.json"
        try:
            data = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("name") in PACKAGE_NAMES:
            return data
    return None


def installed_package(cli: Path) -> str | None:
    """The npm package name pi was installed from, when it can be read from disk."""
    data = _package_json(cli)
    return str(data["name"]) if data else None


def installed_version(cli: Path) -> str | None:
    """The installed pi version, from ``package.json`` or an isolated ``pi --version``."""
    data = _package_json(cli)
    if data and isinstance(data.get("version"), str):
        return data["version"]
    return version_from_cli(cli, extra_env=_isolated_agent_dir, timeout=VERSION_TIMEOUT)


def _isolated_agent_dir(home: Path) -> dict[str, str]:
    """pi's agent dir inside the throw-away HOME, and its offline switches."""
    return {AGENT_DIR_VARIABLE: str(home / ".pi" / "agent"), **OFFLINE_ENV, "TERM": "dumb"}


_CACHE: dict[tuple[str, int], str | None] = {}


def cached_version(cli: Path) -> str | None:
    """:func:`installed_version`, remembered per executable (and its modification time).

    One ``caliper run`` asks for the version more than once (MCP support, the refusal, the
    run's metadata); a wrapper script without a readable ``package.json`` costs a process
    each time otherwise.
    """
    try:
        key = (os.path.realpath(cli), os.stat(cli).st_mtime_ns)
    except OSError:
        return installed_version(cli)
    if key not in _CACHE:
        _CACHE[key] = installed_version(cli)
    return _CACHE[key]


def _version_tuple(text: str) -> tuple[int, ...]:
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(p) for p in match.groups()) if match else ()


def _node_note(required: str | None) -> str | None:
    """A note when the newest pi needs a newer Node than the one on PATH."""
    if not required:
        return None
    minimum = _version_tuple(required)
    node = shutil.which("node")
    if not minimum or node is None:
        return None
    result = run_process(
        [node, "--version"],
        env={"PATH": os.environ.get("PATH", "")},
        cwd=Path.cwd(),
        timeout=VERSION_TIMEOUT,
    )
    local = _version_tuple(result.stdout)
    if local and local < minimum:
        return (
            f"the newest pi needs Node {required}, but `node` here is {result.stdout.strip()}: "
            "npm would install the newest pi that runs on this Node instead"
        )
    return None


def latest_release() -> tuple[str | None, str | None]:
    """``(newest version, note)`` from ``npm view``; the note explains any failure."""
    npm = shutil.which("npm")
    if npm is None:
        return None, "npm is not on PATH, so the newest pi version could not be checked"
    result = run_process(
        [npm, "view", f"{PACKAGE}@latest", "version", "engines", "--json"],
        env=dict(os.environ),
        cwd=Path.cwd(),
        timeout=NPM_TIMEOUT,
    )
    if result.returncode != 0:
        reason = "timed out" if result.timed_out else result.stderr_tail(3) or "no output"
        return None, f"`npm view {PACKAGE}` failed: {reason}"
    try:
        data = json.loads(result.stdout)
    except ValueError:
        return None, f"`npm view {PACKAGE}` printed something unexpected"
    if isinstance(data, str):
        return data, None
    if not isinstance(data, dict) or not isinstance(data.get("version"), str):
        return None, f"`npm view {PACKAGE}` printed something unexpected"
    engines = data.get("engines")
    required = engines.get("node") if isinstance(engines, dict) else None
    return data["version"], _node_note(required if isinstance(required, str) else None)


def update_info(backend_id: str, cli: Path | None, check_latest: bool) -> CliUpdate:
    """What ``caliper update-cli`` shows for pi."""
    notes = []
    installed = installed_version(cli) if cli is not None else None
    if cli is None:
        notes.append(f"pi is not installed; install it with `npm install -g {PACKAGE}`")
    elif installed_package(cli) == OLD_PACKAGE:
        notes.append(f"pi now ships as {PACKAGE}; {OLD_PACKAGE} gets no new releases")
    latest = None
    if check_latest:
        latest, note = latest_release()
        if note:
            notes.append(note)
    return CliUpdate(
        backend=backend_id,
        installed=installed,
        latest=latest,
        update_command=UPDATE_COMMAND,
        self_updating=False,
        note="; ".join(notes) or None,
    )
