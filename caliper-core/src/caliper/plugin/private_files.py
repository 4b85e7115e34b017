"""Writing files only their owner may read (mode 0600), for every backend.

An attempt's generated configuration and copied logins are written with these: the file is
created 0600 (never readable by others, not even for an instant) and its mode is reset when it
already existed. Resolved ``${VAR}`` values may only go to a file under the attempt's
``sandbox.private`` folder (:func:`write_secret_file`); an agent's config in the attempt home
refers to them with the agent's own reference syntax (see
:class:`caliper.plugin.mcp.EnvReferences`).
Each file is noted in the process's ledger (:mod:`caliper.system.ledger`) before it is written, so a
killed run's are removed by the next run or ``caliper clean``.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from caliper.system.ledger import note_private

if TYPE_CHECKING:
    from caliper.plugin.attempt import AttemptSandbox

PRIVATE_MODE = 0o600


def write_private(path: Path, data: str | bytes) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` with mode 0600, creating its folder."""
    path.parent.mkdir(parents=True, exist_ok=True)
    note_private(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_MODE)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data.encode("utf-8") if isinstance(data, str) else data)
    path.chmod(PRIVATE_MODE)
    return path


def copy_private(source: Path, target: Path) -> bool:
    """Copy ``source`` to ``target`` with mode 0600 (a login file); ``False`` when there is no
    ``source`` file. The original is only read."""
    if not source.is_file():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    note_private(target)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_MODE)
    with os.fdopen(fd, "wb") as out, source.open("rb") as src:
        shutil.copyfileobj(src, out)
    target.chmod(PRIVATE_MODE)
    return True


def write_secret_file(sandbox: AttemptSandbox, name: str, data: str | bytes) -> Path:
    """Write a file that holds resolved secrets: ``<sandbox.private>/<name>``, mode 0600.

    ``name`` is one file name (no folder); the attempt's private folder is removed with the
    attempt, and nothing in it is saved.
    """
    if not name or name in (".", "..") or "/" in name or "\\" in name:
        raise ValueError(f"{name!r} is not one file name")
    return write_private(sandbox.private / name, data)
