"""A prepared run as plain, secret-free data, so its attempts can run on another machine.

An executor that runs attempts elsewhere (``caliper-executor-ray``) cannot hand a
:class:`~caliper.runner.run.prepare.PreparedRun` over as it is: it holds plugin objects, paths of
this machine and the resolved ``${VAR}`` values of the spec's ``mcp:`` servers. :func:`pack`
turns it into a :class:`PortableRun`:

* the spec's folder, file by file (the spec, its ``assert:`` files and their neighbours, its
  ``history:`` files, ``sandbox.extra_path`` scripts — whatever a setup or check may use),
  leaving out version control, results, virtual environments, links and special files, capped
  at ``CALIPER_BUNDLE_MAX_BYTES`` (default 64 MiB);
* every declared skill as it was resolved (for git sources: the exact commit's files), with the
  same copy rules the skill installers use, so its content hash is the same on the node;
* the run's options, the engine label, the ablation, the driver's forbidden-read patterns;
* the NAMES of the ``${VAR}`` variables, never their values.

On a node, :func:`unpack` puts its files in place once; :mod:`caliper.remote` rebuilds the
run from them there (the spec validated again, the engine and CLI found on the node, the
``${VAR}`` values read from the node's own environment) and runs its attempts.

Executor plugins never use this module directly: the run hands them each engine's bundle as
an opaque :class:`~caliper.plugin.executor.RunBundle` (its payload is :meth:`PortableRun.to_bytes`,
packed only when an executor asks), and on a node they call :mod:`caliper.remote`.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from caliper.errors import CaliperError
from caliper.plugin.mcp import VARIABLE
from caliper.spec.safetar import extract
from caliper.system import attrs_classes
from caliper.system.skill_tree import scan

if TYPE_CHECKING:
    from caliper.plugin.skills import ResolvedSkill
    from caliper.runner.run.options import RunOptions
    from caliper.runner.run.prepare import Ablation, PreparedRun

MAX_BYTES_VARIABLE = "CALIPER_BUNDLE_MAX_BYTES"
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
SKIPPED_NAMES = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".caliper",
        "__pycache__",
        ".venv",
        "venv",
        "node_modules",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
"""Folders of the spec's folder never shipped (version control, results, environments)."""
CACHE_VARIABLE = "CALIPER_BUNDLE_DIR"
"""Where a node unpacks bundles (default: ``caliper-bundles-<uid>`` in its temp folder)."""


class BundleTooLarge(CaliperError):
    """The spec's folder (or a skill) is bigger than ``CALIPER_BUNDLE_MAX_BYTES`` (exit 2)."""

    exit_code = 2


@attrs_classes.frozen
class PortableSkill:
    """A resolved skill and the files it installs, without this machine's paths."""

    skill: ResolvedSkill
    """The skill as resolved on the driver, its folder and scan left out (paths of the
    driver): the node sets ``source_dir`` to where it unpacks :attr:`archive`."""
    archive: bytes
    """The skill's files as an uncompressed tar (what ``caliper.system.skill_tree`` copies)."""


@attrs_classes.frozen
class PortableRun:
    """Everything an attempt needs on a node, minus secrets (see the module docstring)."""

    spec_name: str
    """The spec file's name inside :attr:`spec_folder`."""
    spec_folder: bytes
    """The spec's folder as an uncompressed tar."""
    skills: tuple[PortableSkill, ...]
    installed: tuple[str, ...]
    """Names of the skills installed in attempts (the declared ones minus ``--ablate``)."""
    options: RunOptions
    engine: str
    """The engine as ``backend[:model]``, resolved again on the node."""
    ablation: Ablation
    user_customizations: bool
    spec_sha256: str
    forbidden: tuple[str, ...]
    """The driver's forbidden-read patterns (the node adds its own spec path)."""
    secret_names: tuple[str, ...]
    """Variables the spec's (non-ablated) ``mcp:`` servers refer to; values never travel."""
    digest: str = ""
    """A stable id of the contents above (the node's cache key), set by :func:`pack`."""

    def to_bytes(self) -> bytes:
        """The bundle as bytes (what an executor ships, e.g. with one ``ray.put`` per run)."""
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def from_bytes(data: bytes) -> PortableRun:
        """The bundle :meth:`to_bytes` made."""
        loaded = pickle.loads(data)
        if not isinstance(loaded, PortableRun):
            raise TypeError(f"not a caliper bundle: {type(loaded).__name__}")
        return loaded


def max_bundle_bytes(environ: Mapping[str, str] | None = None) -> int:
    """``CALIPER_BUNDLE_MAX_BYTES`` as a number of bytes (the default when unset or invalid)."""
    raw = (os.environ if environ is None else environ).get(MAX_BYTES_VARIABLE, "").strip()
    return int(raw) if raw.isdigit() and int(raw) > 0 else DEFAULT_MAX_BYTES


# -- packing (on the driver) --------------------------------------------------------------------


def _folder_files(folder: Path) -> list[tuple[str, Path]]:
    """Regular files under ``folder`` (relative path, path), skipping :data:`SKIPPED_NAMES`,
    links and special files."""
    found: list[tuple[str, Path]] = []
    for current, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_NAMES)
        for name in sorted(files):
            path = Path(current) / name
            try:
                mode = path.lstat().st_mode
            except OSError:
                continue
            if stat.S_ISREG(mode):
                found.append((path.relative_to(folder).as_posix(), path))
    return found


def _tar(files: Sequence[tuple[str, Path]], what: str, limit: int) -> bytes:
    buffer = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for relative, path in files:
            data = path.read_bytes()
            total += len(data)
            if total > limit:
                raise BundleTooLarge(
                    f"{what} holds more than {limit // (1024 * 1024)} MiB, which would be "
                    "shipped to every node.",
                    hint=f"Move large files out of it, or raise {MAX_BYTES_VARIABLE} (in bytes).",
                )
            info = tarfile.TarInfo(relative)
            info.size = len(data)
            info.mode = stat.S_IMODE(path.stat().st_mode) | stat.S_IRUSR | stat.S_IWUSR
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _pack_skill(skill: ResolvedSkill, limit: int) -> PortableSkill:
    tree = skill.tree
    if tree is None or tree.root != skill.source_dir:
        tree = scan(skill.source_dir, max_bytes=limit, source_root=skill.source_root)
    if tree.fatal is not None:
        text = str(tree.fatal_text())
        raise BundleTooLarge(text[0].upper() + text[1:] + ".")
    archive = _tar([(f.relative, f.source) for f in tree.files], f"skill {skill.name!r}", limit)
    shipped = attrs.evolve(skill, source_dir=Path(), tree=None, source_root=None)
    return PortableSkill(skill=shipped, archive=archive)


def secret_names(prepared: PreparedRun) -> tuple[str, ...]:
    """The ``${VAR}`` names the run's (non-ablated) ``mcp:`` servers refer to, in order."""
    names: list[str] = []
    for server in prepared.spec.mcp:
        if server.name in prepared.ablation.mcp:
            continue
        for text in [*server.env.values(), *server.headers.values(), server.url or ""]:
            names.extend(VARIABLE.findall(text))
    return tuple(dict.fromkeys(names))


def pack(prepared: PreparedRun, *, max_bytes: int | None = None) -> PortableRun:
    """The secret-free bundle of ``prepared`` (see the module docstring).

    Raises :class:`BundleTooLarge` (exit 2) when the spec's folder or a skill passes the cap.
    """
    limit = max_bundle_bytes() if max_bytes is None else max_bytes
    folder = prepared.spec.directory
    spec_folder = _tar(_folder_files(folder), f"The spec's folder {folder}", limit)
    portable = PortableRun(
        spec_name=prepared.spec.path.name,
        spec_folder=spec_folder,
        skills=tuple(_pack_skill(skill, limit) for skill in prepared.skills),
        installed=tuple(skill.name for skill in prepared.installed_skills),
        options=prepared.options,
        engine=prepared.engine.label,
        ablation=prepared.ablation,
        user_customizations=prepared.user_customizations,
        spec_sha256=prepared.spec_sha256,
        forbidden=tuple(pattern.pattern for pattern in prepared.forbidden),
        secret_names=secret_names(prepared),
    )
    digest = hashlib.sha256(portable.to_bytes()).hexdigest()[:24]
    return attrs.evolve(portable, digest=digest)


# -- rebuilding (on a node) ---------------------------------------------------------------------


def bundle_root() -> Path:
    """Where this node unpacks bundles: ``$CALIPER_BUNDLE_DIR``, else a private (0700)
    ``caliper-bundles-<uid>`` folder in the temp folder."""
    configured = os.environ.get(CACHE_VARIABLE, "").strip()
    root = (
        Path(configured)
        if configured
        else (Path(tempfile.gettempdir()) / f"caliper-bundles-{os.getuid()}")
    )
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    return root


def _untar(data: bytes, destination: Path, label: str) -> None:
    """Unpack one of the bundle's archives through the one bounded, checked unpacker."""
    extract(Path(label), destination, data=data)


def unpack(portable: PortableRun, root: Path | None = None) -> Path:
    """Unpack ``portable``'s files under ``root`` once (atomically; several worker processes
    of a node may race) and return the folder: ``spec/`` and ``skills/<n>/``."""
    root = root or bundle_root()
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    target = root / portable.digest
    if target.is_dir():
        return target
    staging = Path(tempfile.mkdtemp(prefix=f".{portable.digest}-", dir=root))
    _untar(portable.spec_folder, staging / "spec", f"the run bundle {portable.digest}'s spec")
    for index, skill in enumerate(portable.skills):
        _untar(skill.archive, staging / "skills" / str(index), f"the run bundle's skill {index}")
    try:
        os.rename(staging, target)
    except OSError:  # another process of this node was first
        shutil.rmtree(staging, ignore_errors=True)
    return target
