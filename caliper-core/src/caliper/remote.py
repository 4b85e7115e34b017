"""What an executor plugin calls on a node: the node-side twin of :mod:`caliper.api`.

An executor that runs attempts on other machines (``caliper-executor-ray``) ships each
engine's :class:`~caliper.plugin.executor.RunBundle` (from
:attr:`~caliper.plugin.executor.RunWork.bundles`) to its nodes and, there, calls:

* :func:`check_node` once per node before the run: can this node run the bundle's attempts
  (the spec is valid against the node's plugins, the agent CLI is installed and ready, every
  ``${VAR}`` the spec's ``mcp:`` servers use is set in the node's environment);
  :func:`cli_version` says which version of the CLI the node has;
* :func:`run_job` for each job: the attempt with its retries and redaction, exactly as the
  driver's own ``RunWork.run_here`` would run it, stopped (agent processes ended, the
  ``cleanup:`` run, the sandbox removed) when ``stop_requested()`` turns true or the calling
  thread gets ``KeyboardInterrupt``;
* :func:`lost_job` on the driver, for a job whose node or worker died: the finished attempt
  an ``infra_error`` record makes (retryable with ``caliper retry``).

A bundle is rebuilt once per process (cached by its id) and every call leaves the node's
sandbox folder as it found it: its files are unpacked
(:func:`caliper.runner.run.portable.unpack`), its spec validated again against the node's
judges, its engine resolved against the node's backends, the CLI found there, and the
``${VAR}`` values the spec's ``mcp:`` servers use read from the node's own environment (the
environment its worker processes were started with). Secrets never travel.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from caliper.errors import CaliperError, SetupError
from caliper.host.engine import resolve_engine
from caliper.host.install_hints import add_distribution
from caliper.host.plugins import PluginHost
from caliper.plugin.executor import FinishedAttempt
from caliper.plugin.mcp import resolve_servers
from caliper.plugin.sandbox import finish_removals, sandbox_parent
from caliper.results.models import AttemptRecord, Outcome
from caliper.runner.attempt.forbidden import forbidden_patterns
from caliper.runner.attempt.judge_calls import judge_engine_for
from caliper.runner.attempt.judging import LazyEngine
from caliper.runner.run.control import RunController
from caliper.runner.run.job_runner import JobRunner
from caliper.runner.run.portable import PortableRun, unpack
from caliper.runner.run.prepare import PreparedRun, check_cli
from caliper.spec.load import load_spec
from caliper.system import process
from caliper.system.ledger import release_idle

if TYPE_CHECKING:
    from caliper.plugin.executor import AttemptJob, RunBundle
    from caliper.plugin.skills import ResolvedSkill
    from caliper.spec.model import Spec

STOP_WAIT_SECONDS = 90.0
"""How long a stopped job waits for its attempt to finish its cleanup."""
POLL_SECONDS = 0.2

_portables: dict[str, PortableRun] = {}
_prepared: dict[str, PreparedRun] = {}
_judges: dict[str, object] = {}
_lock = threading.Lock()


def _portable(bundle: RunBundle) -> PortableRun:
    """The bundle's contents, unpacked once per process."""
    key = bundle.id
    with _lock:
        found = _portables.get(key)
        if found is None:
            found = PortableRun.from_bytes(bundle.payload())
            _portables[key] = found
        return found


def check_node(bundle: RunBundle) -> str | None:
    """Whether this node can run ``bundle``'s attempts: ``None``, or what is wrong (the
    message and what to do, as one text). The node's sandbox folder is left clean."""
    try:
        _prepared_for(_portable(bundle))
    except CaliperError as exc:
        return exc.render()
    finally:
        _leave_node_clean()
    return None


def cli_version(bundle: RunBundle) -> str | None:
    """The version of ``bundle``'s agent CLI on this node (``None``: unknown, or the node
    cannot run the bundle; a version probe never raises)."""
    try:
        prepared = _prepared_for(_portable(bundle))
        return prepared.engine.backend.cli_version(prepared.cli_path)
    except Exception:  # the node cannot run the bundle, or the probe failed
        return None


def run_job(
    bundle: RunBundle,
    job: AttemptJob,
    stop_requested: Callable[[], bool] | None = None,
    *,
    node: str | None = None,
    on_stop: Callable[[], None] | None = None,
) -> FinishedAttempt:
    """Run ``job`` of ``bundle`` on this node and return its finished attempt (``node`` set).

    The attempt runs on a thread of this process while the calling thread waits. When
    ``stop_requested()`` (when given) turns true, or the calling thread gets
    ``KeyboardInterrupt`` (what a cancelled Ray task gets), the attempt stops the way Ctrl-C
    stops a local run: its agent's processes end, its ``cleanup:`` runs, its sandbox is
    removed, and the finished attempt has no record; a second ``KeyboardInterrupt`` cuts the
    cleanup short too. ``on_stop`` (when given) is called once, in the calling thread, as
    the stop begins (e.g. to log it). A node that cannot run the bundle at all gives a
    ``fatal`` setup error.
    """
    process.reset_stop()
    process.adopt_orphans()
    try:
        return _run_and_wait(bundle, job, stop_requested, node, on_stop)
    finally:
        # the job's orphaned descendants are ended, then this process's own process handling
        # is as it was (the caller's other children are never touched)
        process.sweep_orphans()
        process.release_orphans()


def _run_and_wait(
    bundle: RunBundle,
    job: AttemptJob,
    stop_requested: Callable[[], bool] | None,
    node: str | None,
    on_stop: Callable[[], None] | None,
) -> FinishedAttempt:
    """:func:`run_job` once this process adopts orphans: the attempt on a thread, waited for
    here and stopped on a request or ``KeyboardInterrupt``."""
    controller = RunController()
    outcome: dict[str, FinishedAttempt] = {}

    def work() -> None:
        outcome["finished"] = _run_portable(_portable(bundle), job, controller)

    thread = threading.Thread(target=work, name="caliper-attempt", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(POLL_SECONDS)
            if thread.is_alive() and stop_requested is not None and stop_requested():
                raise _StopRequested()
    except (KeyboardInterrupt, _StopRequested):
        if on_stop is not None:
            on_stop()
        _stop(controller, thread)
        return FinishedAttempt(job=job, record=None, node=node)
    finished = outcome.get("finished") or FinishedAttempt(job=job, record=None)
    finished.node = node
    return finished


class _StopRequested(Exception):
    """``stop_requested()`` turned true while a job ran."""


def _stop(controller: RunController, thread: threading.Thread) -> None:
    """Stop the attempt running on ``thread`` (through its run's ``controller``) and wait for
    its cleanup; a second ``KeyboardInterrupt`` ends the cleanup's processes too."""
    controller.request_stop("cancelled", kill=True)
    controller.drain()
    try:
        thread.join(STOP_WAIT_SECONDS)
    except KeyboardInterrupt:
        process.stop_all(force=True)
        thread.join(STOP_WAIT_SECONDS)


def lost_job(
    job: AttemptJob, error: BaseException, *, what: str = "the task", node: str | None = None
) -> FinishedAttempt:
    """The finished attempt of ``job`` whose worker or node died while running it (or whose
    task failed outside caliper): an ``infra_error`` record saying ``what`` (e.g. ``"the Ray
    task"``) running it failed, and with which ``error``."""
    text = str(error).strip()
    detail = text.splitlines()[0] if text else type(error).__name__
    reason = f"{what} running this attempt failed: {type(error).__name__}: {detail}"
    record = AttemptRecord(
        task_name=job.task_name,
        attempt=job.number,
        outcome=Outcome.INFRA_ERROR,
        reason=reason,
        error=reason,
    )
    return FinishedAttempt(job=job, record=record, node=node)


def install_command(distribution: str) -> str:
    """The command (or commands, as one sentence) that add ``distribution`` to this machine's
    Caliper install (what an executor's message says when its own dependencies are missing)."""
    return add_distribution(distribution)


# -- the bundle on this node --------------------------------------------------------------------


def _missing_variables(portable: PortableRun, environ: Mapping[str, str]) -> list[str]:
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
    here = forbidden_patterns(
        spec.sandbox.forbidden_files, spec_file_name=spec_path.name, spec_path=str(spec_path)
    )
    patterns = {p.pattern: p for p in here}
    for source in portable.forbidden:
        patterns.setdefault(source, re.compile(source))
    return tuple(patterns.values())


def _rebuild(
    portable: PortableRun,
    host: PluginHost,
    *,
    root: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> PreparedRun:
    """A :class:`PreparedRun` on this node from ``portable``: the bundle unpacked (under
    ``root``), its spec validated against the node's judges, its engine resolved against the
    node's backends, the CLI found here and the ``${VAR}`` values read from ``environ`` (this
    process's environment by default).

    Raises :class:`SetupError` (exit 3) when this node cannot run it: the CLI is missing, a
    ``${VAR}`` is unset here, the spec is invalid against this node's plugins.
    """
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
    missing = _missing_variables(portable, environ)
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


_prepared_lock = threading.Lock()


def _prepared_for(portable: PortableRun, host: PluginHost | None = None) -> PreparedRun:
    """:func:`_rebuild` once per process per bundle (later attempts of the run reuse it)."""
    key = portable.digest
    with _prepared_lock:
        found = _prepared.get(key)
        if found is None:
            found = _rebuild(portable, host or PluginHost())
            _prepared[key] = found
        return found


def _leave_node_clean() -> None:
    """After work on a node whose worker process goes on (a check, a job): wait for its
    sandboxes' removal and close the process's idle ledgers, so the node's sandbox folder is
    left as it was found."""
    finish_removals()
    release_idle()


def _judge_engine(key: str, prepared: PreparedRun, host: PluginHost | None) -> object:
    """The run's judge engine on this node, resolved on first use (one per bundle)."""
    with _prepared_lock:
        found = _judges.get(key)
        if found is None:
            resolved_host = host or PluginHost()
            found = LazyEngine(lambda: judge_engine_for(resolved_host, prepared.options, prepared))
            _judges[key] = found
        return found


def _run_portable(
    portable: PortableRun,
    job: AttemptJob,
    controller: RunController,
    host: PluginHost | None = None,
) -> FinishedAttempt:
    """Run ``job`` of ``portable`` here, as ``RunWork.run_here`` would on the driver: the
    attempt pipeline with automatic retries and redaction (with this node's secret values).

    A node that cannot run the bundle at all gives a ``fatal`` :class:`SetupError`.
    """
    try:
        prepared = _prepared_for(portable, host)
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
        _leave_node_clean()
