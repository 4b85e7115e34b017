"""Reading an agent CLI's installed version and asking npm for the newest one.

Shared by backends for ``Backend.cli_version`` and the ``cli_update_info`` hook. The CLI always
runs with a throw-away HOME (some CLIs write into their home even for ``--version``), and the
npm query is bounded so ``caliper update-cli`` never hangs without a network. A version is
cached per binary (path, size, modification time), so a run starts the CLI for ``--version``
only after it was installed or updated.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from caliper.system.output_file import OutputWriteError, write_output
from caliper.system.process import run_process

VERSION_TIMEOUT = 20.0
NPM_TIMEOUT = 30.0
CACHE_NAME = "cli-versions.json"
CACHE_ENTRIES = 64
_VERSION = re.compile(r"\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?")


def parse_version(text: str) -> str | None:
    """The first ``X.Y.Z`` (with any pre-release or build suffix) in ``text``."""
    match = _VERSION.search(text)
    return match.group(0) if match else None


def _cache_file() -> Path | None:
    """Where versions are cached, or ``None`` when no safe place exists.

    ``$CALIPER_CACHE_DIR`` when set; otherwise a private per-user folder in the runtime or
    temporary folder (``caliper-<uid>``, mode 0700, owned by us), never the user's home: a run
    leaves the home exactly as it found it. A folder someone else owns, or one others can
    write to, is not used (the version is probed instead).
    """
    override = os.environ.get("CALIPER_CACHE_DIR")
    if override:
        return Path(override) / CACHE_NAME
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    folder = Path(base) / f"caliper-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return folder / CACHE_NAME


def _binary_key(cli: Path) -> str | None:
    """``path|resolved|size|mtime_ns`` of the CLI: a new install (or an edit) changes it."""
    try:
        resolved = cli.resolve()
        info = resolved.stat()
    except OSError:
        return None
    return f"{cli.absolute()}|{resolved}|{info.st_size}|{info.st_mtime_ns}"


def _read_cache(path: Path) -> dict[str, str]:
    """The cached versions; empty when the file is missing, unreadable or not what we wrote."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def _write_cache(path: Path, key: str, version: str) -> None:
    """Add one entry (best effort: a read-only or full cache folder only costs a re-probe)."""
    entries = _read_cache(path)
    entries[key] = version
    if len(entries) > CACHE_ENTRIES:
        entries = dict(list(entries.items())[-CACHE_ENTRIES:])

    with contextlib.suppress(OutputWriteError):
        write_output(path, json.dumps(entries))


def version_from_cli(
    cli: Path,
    *,
    extra_env: Callable[[Path], Mapping[str, str]] | None = None,
    timeout: float = VERSION_TIMEOUT,
    cache: bool = True,
) -> str | None:
    """Run ``CLI --version`` in a throw-away HOME; ``None`` if it fails, hangs or says nothing.

    ``extra_env`` receives that HOME and returns variables to add (e.g. a config folder inside
    it, or switches that keep the CLI quiet). With ``cache`` a version found before for the
    same binary (path, size and modification time) is read from ``cli-versions.json`` (see
    :func:`_cache_file`: never under the user's home) instead of starting the CLI.
    """
    key = _binary_key(cli) if cache else None
    where = _cache_file() if key is not None else None
    if key is not None and where is not None:
        known = _read_cache(where).get(key)
        if known is not None:
            return known
    version = _probe(cli, extra_env, timeout)
    if key is not None and where is not None and version is not None:
        _write_cache(where, key, version)
    return version


def version_in_background(probe: Callable[[], str | None]) -> Callable[[], str | None]:
    """Start ``probe`` on a thread now; the returned function waits for its answer.

    So the version probe of a run is never on the path to its first attempt. Called with
    ``wait=False`` it answers ``None`` at once while the probe is still running.
    """
    answer: list[str | None] = [None]

    def work() -> None:
        with contextlib.suppress(Exception):  # a version probe must never break a run
            answer[0] = probe()

    thread = threading.Thread(target=work, name="caliper-cli-version", daemon=True)
    thread.start()

    def result(wait: bool = True) -> str | None:
        if wait:
            thread.join()
        elif thread.is_alive():
            return None
        return answer[0]

    return result


def _probe(
    cli: Path, extra_env: Callable[[Path], Mapping[str, str]] | None, timeout: float
) -> str | None:
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
