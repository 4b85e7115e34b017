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

On the node :func:`rebuild` unpacks it once per process (:func:`prepared_for`), validates the
spec again against the node's judges, resolves the engine against the node's backends, finds
the CLI there and resolves the ``${VAR}`` values from the node's own environment (the
environment its worker processes were started with). :func:`check_node` is the same, as a
pre-flight that returns a problem per node instead of raising.

Executor plugins never use this module directly: the run hands them each engine's bundle as
an opaque :class:`~caliper.plugin.executor.RunBundle` (its payload is :meth:`PortableRun.to_bytes`,
packed only when an executor asks), and on a node they call :mod:`caliper.remote`.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import re
import stat
import tarfile
import tempfile
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from caliper.errors import CaliperError, SetupError

if TYPE_CHECKING:
    from caliper.host.plugins import PluginHost
    from caliper.plugin.executor import AttemptJob, FinishedAttempt
    from caliper.plugin.skills import ResolvedSkill
    from caliper.runner.run.control import RunController
    from caliper.runner.run.options import RunOptions
    from caliper.runner.run.prepare import Ablation, PreparedRun
    from caliper.spec.model import Spec

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


@attrs.frozen
class PortableSkill:
    """A resolved skill and the files it installs, without this machine's paths."""

    skill: ResolvedSkill
    """The skill as resolved on the driver, its folder and scan left out (paths of the
    driver): the node sets ``source_dir`` to where it unpacks :attr:`archive`."""
    archive: bytes
    """The skill's files as an uncompressed tar (what ``caliper.system.skill_tree`` copies)."""


@attrs.frozen
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
    from caliper.system.skill_tree import scan

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
    from caliper.plugin.mcp import VARIABLE

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
    from caliper.spec.safetar import extract

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
        import shutil

        shutil.rmtree(staging, ignore_errors=True)
    return target


def missing_variables(portable: PortableRun, environ: Mapping[str, str]) -> list[str]:
    """The ``${VAR}`` names the run needs that ``environ`` does not set."""
    return [name for name in portable.secret_names if name not in environ]


def _skills(portable: PortableRun, folder: Path) -> tuple[ResolvedSkill, ...]:
    """The bundle's skills as resolved skills whose files are in the unpacked ``folder``."""
    return tuple(
        attrs.evolve(packed.skill, source_dir=folder / "skills" / str(index))
        for index, packed in enumerate(portable.skills)
    )


def _forbidden(portable: PortableRun, spec: Spec, spec_path: Path) -> tuple[re.Pattern[str], ...]:
    """The node's forbidden-read patterns (its own spec path) plus the driver's."""
    from caliper.runner.attempt.forbidden import forbidden_patterns

    here = forbidden_patterns(
        spec.sandbox.forbidden_files, spec_file_name=spec_path.name, spec_path=str(spec_path)
    )
    patterns = {p.pattern: p for p in here}
    for source in portable.forbidden:
        patterns.setdefault(source, re.compile(source))
    return tuple(patterns.values())


def rebuild(
    portable: PortableRun,
    host: PluginHost,
    *,
    root: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> PreparedRun:
    """A :class:`PreparedRun` on this node from ``portable`` (see the module docstring).

    Raises :class:`SetupError` (exit 3) when this node cannot run it: the CLI is missing, a
    ``${VAR}`` is unset here, the spec is invalid against this node's plugins.
    """
    from caliper.host.engine import resolve_engine
    from caliper.plugin.mcp import resolve_servers
    from caliper.plugin.sandbox import sandbox_parent
    from caliper.runner.run.prepare import PreparedRun, check_cli
    from caliper.spec.load import load_spec

    environ = os.environ if environ is None else environ
    folder = unpack(portable, root)
    spec_path = folder / "spec" / portable.spec_name
    judges = host.judges()
    try:
        spec = load_spec(spec_path, judges)
    except CaliperError as exc:
        raise SetupError(
            f"The spec is not valid with this node's plugins: {exc.message}",
            hint="Install the same caliper-eval version (and judge plugins) on every node.",
        ) from None
    engine = resolve_engine(host, portable.engine, flag="--model")
    cli_path = check_cli(engine)
    missing = missing_variables(portable, environ)
    if missing:
        raise SetupError(
            f"${{{missing[0]}}} is not set in this node's environment (the spec's mcp: servers "
            "refer to it).",
            hint="Export it where the node's Ray workers are started (before `ray start`); "
            "secrets never travel with the attempts.",
        )
    mcp = resolve_servers([m for m in spec.mcp if m.name not in portable.ablation.mcp], environ)
    skills = _skills(portable, folder)
    installed = tuple(skill for skill in skills if skill.name in set(portable.installed))
    installer = host.skill_installer(engine.backend_id) if installed else None
    translator = host.mcp_translator(engine.backend_id) if mcp.servers else None
    if (installed and installer is None) or (mcp.servers and translator is None):
        raise SetupError(
            f"The {engine.backend_id} backend on this node cannot install the spec's skills "
            "or mcp: servers.",
            hint="Install the same caliper-eval version on every node.",
        )
    parent = sandbox_parent()
    return PreparedRun(
        options=attrs.evolve(portable.options, spec_path=spec_path),
        spec=spec,
        judges=judges,
        engine=engine,
        cli_path=cli_path,
        skills=skills,
        installed_skills=installed,
        mcp=mcp,
        installer=installer,
        translator=translator,
        forbidden=_forbidden(portable, spec, spec_path),
        spec_sha256=portable.spec_sha256,
        sandbox_parent=parent.absolute() if parent is not None else None,
        results_root=None,
        ablation=portable.ablation,
        user_customizations=portable.user_customizations,
    )


_cache: dict[str, PreparedRun] = {}
_cache_lock = threading.Lock()


def prepared_for(portable: PortableRun, host: PluginHost | None = None) -> PreparedRun:
    """:func:`rebuild` once per process per bundle (later attempts of the run reuse it)."""
    from caliper.host.plugins import PluginHost

    key = portable.digest
    with _cache_lock:
        found = _cache.get(key)
        if found is None:
            found = rebuild(portable, host or PluginHost())
            _cache[key] = found
        return found


def check_node(portable: PortableRun, host: PluginHost | None = None) -> str | None:
    """Whether this node can run ``portable``'s attempts: ``None``, or what is wrong (the
    message and what to do, as one text), including the CLI version found when it works."""
    try:
        prepared_for(portable, host)
    except CaliperError as exc:
        return exc.render()
    finally:
        leave_node_clean()
    return None


def leave_node_clean() -> None:
    """After work on a node whose worker process goes on (a check, a job): wait for its
    sandboxes' removal and close the process's idle ledgers, so the node's sandbox folder is
    left as it was found."""
    from caliper.plugin.sandbox import finish_removals
    from caliper.system.ledger import release_idle

    finish_removals()
    release_idle()


_judges: dict[str, object] = {}


def _judge_engine(key: str, prepared: PreparedRun, host: PluginHost | None) -> object:
    """The run's judge engine on this node, resolved on first use (one per bundle)."""
    from caliper.host.plugins import PluginHost
    from caliper.runner.attempt.judge_calls import judge_engine_for
    from caliper.runner.attempt.judging import LazyEngine

    with _cache_lock:
        found = _judges.get(key)
        if found is None:
            resolved_host = host or PluginHost()
            found = LazyEngine(lambda: judge_engine_for(resolved_host, prepared.options, prepared))
            _judges[key] = found
        return found


def run_job(
    portable: PortableRun,
    job: AttemptJob,
    controller: RunController,
    host: PluginHost | None = None,
) -> FinishedAttempt:
    """Run ``job`` of ``portable`` here, as ``RunWork.run_here`` would on the driver: the
    attempt pipeline with automatic retries and redaction (with this node's secret values).

    A node that cannot run the bundle at all gives a ``fatal`` :class:`SetupError`.
    """
    from caliper.plugin.executor import FinishedAttempt
    from caliper.runner.run.job_runner import JobRunner

    try:
        prepared = prepared_for(portable, host)
    except CaliperError as exc:
        return FinishedAttempt(job=job, record=None, fatal=exc)
    if job.task_name not in {task.name for task in prepared.spec.tasks}:
        error = SetupError(f"The spec shipped to this node has no task {job.task_name!r}.")
        return FinishedAttempt(job=job, record=None, fatal=error)
    judge_engine = _judge_engine(portable.digest, prepared, host)
    key = job.engine_key
    try:
        return JobRunner({key: prepared}, controller, {key: judge_engine})(job)  # type: ignore[dict-item]
    finally:
        leave_node_clean()
