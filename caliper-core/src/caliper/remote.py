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
sandbox folder as it found it. Secrets never travel: they come from the node's environment.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from caliper.plugin.executor import AttemptJob, FinishedAttempt, RunBundle
    from caliper.runner.run.control import RunController
    from caliper.runner.run.portable import PortableRun

STOP_WAIT_SECONDS = 90.0
"""How long a stopped job waits for its attempt to finish its cleanup."""
POLL_SECONDS = 0.2

_portables: dict[str, PortableRun] = {}
_lock = threading.Lock()


def _portable(bundle: RunBundle) -> PortableRun:
    """The bundle's contents, unpacked once per process."""
    from caliper.runner.run.portable import PortableRun

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
    from caliper.runner.run.portable import check_node as check

    return check(_portable(bundle))


def cli_version(bundle: RunBundle) -> str | None:
    """The version of ``bundle``'s agent CLI on this node (``None``: unknown, or the node
    cannot run the bundle; a version probe never raises)."""
    from caliper.runner.run.portable import prepared_for

    try:
        prepared = prepared_for(_portable(bundle))
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
    from caliper.system import process

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
    from caliper.plugin.executor import FinishedAttempt
    from caliper.runner.run.control import RunController
    from caliper.runner.run.portable import run_job as run_portable

    controller = RunController()
    outcome: dict[str, FinishedAttempt] = {}

    def work() -> None:
        outcome["finished"] = run_portable(_portable(bundle), job, controller)

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
    from caliper.system import process

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
    from caliper.plugin.executor import FinishedAttempt
    from caliper.results.models import AttemptRecord, Outcome

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
    from caliper.host.catalogue import add_distribution

    return add_distribution(distribution)
