"""The throw-away world one attempt runs in: a fresh temp root with its own HOME.

Each attempt gets ``<root>/home`` (the agent's HOME), ``<root>/work`` (its working directory),
``<root>/private`` (0700, for generated config and resolved secrets; created when a backend
first asks for it) and ``<root>/tmp`` (TMPDIR). The root lives under ``$CALIPER_TMPDIR`` when
set, else the system temp folder.
Nothing here ever writes to the user's real home.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from caliper.plugin.attempt import AttemptSandbox
from caliper.system.ledger import new_sandbox_root, sandbox_removed
from caliper.system.removals import BackgroundRemovals
from caliper.system.temp_root import TMPDIR_VARIABLE as TMPDIR_VARIABLE  # re-exported
from caliper.system.temp_root import remove_tree
from caliper.system.temp_root import sandbox_parent as sandbox_parent  # re-exported

DEFAULT_LOCALE = "C.UTF-8"


def real_home() -> Path:
    """The caliper process's own HOME (read-only for backends seeding authentication)."""
    home = os.environ.get("HOME")
    return Path(home) if home else Path.home()


def resolve_extra_path(extra_path: Sequence[str], spec_dir: Path) -> list[str]:
    """The spec's ``sandbox.extra_path`` entries as absolute folders (relative to the spec)."""
    return [str((spec_dir / entry).resolve()) for entry in extra_path]


def minimal_env(
    *,
    home: Path,
    tmpdir: Path,
    extra_path: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The minimal environment an agent starts from: PATH, locale, TERM, HOME and TMPDIR.

    Nothing else is inherited from the caller, so neither credentials nor configuration in the
    user's environment leak into an attempt unless a backend adds them on purpose.
    """
    source = os.environ if environ is None else environ
    path_parts = [*extra_path, *[p for p in source.get("PATH", os.defpath).split(os.pathsep) if p]]
    locale = source.get("LC_ALL") or source.get("LANG") or DEFAULT_LOCALE
    return {
        "PATH": os.pathsep.join(path_parts),
        "LANG": source.get("LANG") or locale,
        "LC_ALL": locale,
        "TERM": "dumb",
        "HOME": str(home),
        "TMPDIR": str(tmpdir),
    }


def make_sandbox(
    *,
    spec_dir: Path,
    extra_path: Sequence[str] = (),
    parent: Path | None = None,
    prefix: str = "caliper-attempt-",
) -> AttemptSandbox:
    """Create a fresh sandbox (see module docstring); remove it with :func:`remove_sandbox`.

    ``parent`` overrides where the root is created (judges nest their sandbox in the attempt's).
    """
    root = new_sandbox_root(parent, prefix)
    home, work, private, tmp = (root / name for name in ("home", "work", "private", "tmp"))
    for folder in (home, work, tmp):
        folder.mkdir()
    # ``private`` is created on first use (AttemptSandbox.private)
    env = minimal_env(home=home, tmpdir=tmp, extra_path=resolve_extra_path(extra_path, spec_dir))
    return AttemptSandbox(
        root=root,
        home=home,
        workdir=work,
        private=private,
        real_home=real_home(),
        base_env=env,
    )


def _remove_now(root: Path) -> None:
    if remove_tree(root):
        sandbox_removed(root)


_removals = BackgroundRemovals(_remove_now, name="caliper-sandbox-removal")


def remove_sandbox(sandbox: AttemptSandbox, *, later: bool = False) -> None:
    """Delete the sandbox root, including read-only files the agent may have left.

    With ``later`` the deletion happens on background threads (deleting many small files is
    slow on some disks, and the next attempt need not wait for it); :func:`finish_removals`
    waits until all are gone, and the threads are not daemons, so the process never exits
    before.
    """
    if not later:
        _remove_now(sandbox.root)
        return
    _removals.add(sandbox.root)


def finish_removals() -> None:
    """Wait until every sandbox handed to :func:`remove_sandbox` is deleted (and let the
    removal threads end at once instead of waiting for more)."""
    _removals.wait()
