"""Where attempt sandboxes live on disk, and removing one whatever its permissions.

``$CALIPER_TMPDIR`` (created when needed) or the system temp folder holds every attempt root;
:func:`remove_tree` deletes a root even when the agent left read-only folders in it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from pathlib import Path

from caliper.errors import CaliperError
from caliper.system.os_errors import describe_os_error

TMPDIR_VARIABLE = "CALIPER_TMPDIR"


def sandbox_parent() -> Path | None:
    """Where attempt roots are created: ``$CALIPER_TMPDIR`` (created if needed) or the default.

    Raises :class:`~caliper.errors.CaliperError` (exit 1) when that folder cannot be made:
    a file is in the way, or the place cannot be written."""
    configured = os.environ.get(TMPDIR_VARIABLE)
    if not configured:
        return None
    parent = Path(configured).expanduser()
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        why = (
            "it is a file, not a folder"
            if parent.exists() and not parent.is_dir()
            else describe_os_error(exc)
        )
        raise CaliperError(
            f"{TMPDIR_VARIABLE}={configured} cannot hold the attempt sandboxes: {why}.",
            hint=f"Point {TMPDIR_VARIABLE} at a folder you can write to, or unset it.",
        ) from None
    return parent


def _make_writable_and_retry(function, path, _exc_info) -> None:  # type: ignore[no-untyped-def]
    with contextlib.suppress(OSError):
        parent = os.path.dirname(path)
        os.chmod(parent, os.stat(parent).st_mode | stat.S_IWUSR | stat.S_IXUSR)
        os.chmod(path, os.stat(path, follow_symlinks=False).st_mode | stat.S_IWUSR)
        function(path)


def remove_tree(root: Path) -> bool:
    """Delete ``root`` and everything under it (read-only folders included); whether it is gone."""
    shutil.rmtree(root, onerror=_make_writable_and_retry)
    if root.exists():
        shutil.rmtree(root, ignore_errors=True)
    return not os.path.lexists(root)
