"""Executors: where a run's attempts are carried out.

The runner's scheduler decides *which* attempt runs next (task order, ``--fail-fast``, stop
signals, adaptive k, per-backend concurrency); an executor decides *where*. The built-in
``local`` executor runs attempts on a thread pool of ``--workers`` threads in this process;
a plugin (``caliper-executor-ray``) runs them as tasks on a cluster. Executors register through
the ``register_executors`` hook and the ``caliper.executors`` entry-point group, like every
other plugin kind.

The contract, as the scheduler uses it::

    session = executor.start(work, settings)
    while there is work:
        while session.has_room(job):          # capacity, per backend
            session.submit(job)               # never blocks
        finished = session.next_finished(0.1) # a FinishedAttempt, or None after the timeout
    session.cancel()                          # on a stop: drop queued jobs, stop running ones
    session.close()                           # always, once

Jobs and finished attempts are plain data (:class:`AttemptJob`, :class:`FinishedAttempt`), so an
executor may ship them to another machine. What a remote machine needs to run a job is in
:class:`RunWork` (the prepared runs, by engine key); secrets (resolved ``${VAR}`` values) are
never part of a job or a finished attempt.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from caliper.errors import CaliperError
    from caliper.results.models import AttemptRecord
    from caliper.runner.run.control import RunController
    from caliper.runner.run.prepare import PreparedRun


@attrs.frozen
class AttemptJob:
    """One attempt to run: which engine's run, which task, which attempt number (1-based)."""

    task_name: str
    number: int
    engine_key: str = ""
    """Which prepared run of :attr:`RunWork.runs` the job belongs to (``""``: the only one)."""
    backend_id: str = ""
    """The backend the attempt runs on, for per-backend concurrency limits."""


@attrs.define
class FinishedAttempt:
    """What running one :class:`AttemptJob` produced.

    ``record`` is ``None`` when the attempt was stopped before it finished (a stop signal, or
    ``--fail-fast`` skipped it); ``fatal`` is an error that stops the whole run (the CLI cannot
    work at all, the judge engine is unusable). ``node`` names where it ran (a host name or a
    cluster node id), ``None`` for this process.
    """

    job: AttemptJob
    record: AttemptRecord | None
    fatal: CaliperError | None = None
    node: str | None = None
    tripped_fail_fast: bool = False
    """Set by the scheduler: this record made its task stop under ``--fail-fast``."""


@attrs.frozen
class RunWork:
    """Everything an executor needs to run a run's jobs.

    ``run_here`` runs one job in the calling thread of this process (what the ``local``
    executor's threads call: sandbox, agent, checks, retries, redaction). A remote executor
    instead rebuilds the attempt on its node from ``runs`` (the spec folder, options and engine
    each prepared run was made from) and must give the same record ``run_here`` would.
    """

    runs: Mapping[str, PreparedRun]
    run_here: Callable[[AttemptJob], FinishedAttempt]
    controller: RunController
    workers: int
    """``--workers``: how many attempts may run at once in total."""
    max_concurrent: Mapping[str, int] = attrs.field(factory=dict)
    """Per-backend limits (backend id → attempts at once), from ``--max-concurrent``."""


@attrs.frozen
class ExecutorOption:
    """A setting an executor takes on the command line, as ``--<executor id>-<name> VALUE``."""

    name: str
    help: str
    default: str | None = None


class ExecutorSession(abc.ABC):
    """One run's use of an executor (from :meth:`Executor.start` to :meth:`close`)."""

    @abc.abstractmethod
    def has_room(self, job: AttemptJob) -> bool:
        """Whether ``job`` may be submitted now (total and per-backend capacity)."""

    @abc.abstractmethod
    def submit(self, job: AttemptJob) -> None:
        """Start ``job``; never blocks. Its :class:`FinishedAttempt` comes from
        :meth:`next_finished`, exactly once, even when it was cancelled."""

    @abc.abstractmethod
    def next_finished(self, timeout: float) -> FinishedAttempt | None:
        """The next finished attempt, waiting at most ``timeout`` seconds (``None``: none yet)."""

    @abc.abstractmethod
    def in_flight(self) -> int:
        """How many submitted jobs have not been handed back by :meth:`next_finished` yet."""

    @abc.abstractmethod
    def cancel(self) -> None:
        """Stop: drop jobs not started, stop running ones (each still reported, with
        ``record=None`` when it did not finish). Safe to call more than once."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release everything the session holds (threads, cluster connections). Called once."""


class Executor(abc.ABC):
    """Where attempts run; registered with the ``register_executors`` hook.

    ``id`` is the public name (``caliper run --executor ID``) and must equal the plugin's
    entry-point name in ``caliper.executors``.
    """

    id: str
    description: str = ""
    options: Sequence[ExecutorOption] = ()
    """Settings this executor takes (``--<id>-<name>``), passed to :meth:`start` by name."""

    @abc.abstractmethod
    def start(self, work: RunWork, settings: Mapping[str, str]) -> ExecutorSession:
        """Begin a run: connect, check the nodes can run ``work``'s engines, return a session.

        Raise :class:`caliper.errors.SetupError` (exit 3) with one message naming the node
        and what to do when the executor cannot run the work at all (no cluster at the
        address, an agent CLI missing on a node).
        """
