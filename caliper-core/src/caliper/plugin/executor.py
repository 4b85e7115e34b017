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

A session whose attempts finish in this process may accept
:meth:`ExecutorSession.settle_where_finished`: the thread that finished an attempt then takes
it into account itself (and so may submit the next job) before handing it back, with no
wait for the scheduler's thread in between.

Jobs and finished attempts are plain data (:class:`AttemptJob`, :class:`FinishedAttempt`), so an
executor may ship them to another machine. What a remote machine needs to run a job is in
:class:`RunWork`: one opaque :class:`RunBundle` per engine key, which a node hands to
:mod:`caliper.remote` (``check_node``, ``run_job``). Secrets (resolved ``${VAR}`` values) are
never part of a bundle, a job or a finished attempt.

This module is the whole contract: it imports nothing of the runner, so an executor plugin
needs only :mod:`caliper.plugin` on the driver and :mod:`caliper.remote` on its nodes.
"""

from __future__ import annotations

import abc
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Protocol

import attrs

from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.errors import CaliperError


class AttemptRecordLike(Protocol):
    """What the contract needs of an attempt's record (the runner's
    ``caliper.results.models.AttemptRecord``, which an executor passes on untouched)."""

    @property
    def task_name(self) -> str:
        """The task the attempt ran."""
        ...

    @property
    def attempt(self) -> int:
        """The attempt's number (1-based)."""
        ...


@attrs_classes.frozen
class AttemptJob:
    """One attempt to run: which engine's run, which task, which attempt number (1-based)."""

    task_name: str
    number: int
    engine_key: str = ""
    """Which engine's bundle of :attr:`RunWork.bundles` the job belongs to (``""``: the only
    one)."""
    backend_id: str = ""
    """The backend the attempt runs on, for per-backend concurrency limits."""


@attrs_classes.define
class FinishedAttempt:
    """What running one :class:`AttemptJob` produced.

    ``record`` is the attempt's record (a ``caliper.results.models.AttemptRecord``, made by
    the runner here or by :mod:`caliper.remote` on a node; :func:`caliper.remote.lost_job`
    makes the one of a job whose node failed), ``None`` when the attempt was stopped before
    it finished (a stop signal, or ``--fail-fast`` skipped it); ``fatal`` is an error that
    stops the whole run (the CLI cannot work at all, the judge engine is unusable). ``node``
    names where it ran (a host name or a cluster node id), ``None`` for this process.
    """

    job: AttemptJob
    record: AttemptRecordLike | None
    fatal: CaliperError | None = None
    node: str | None = None
    tripped_fail_fast: bool = False
    """Set by the scheduler: this record made its task stop under ``--fail-fast``."""


class RunBundle:
    """One engine's prepared run as an opaque, secret-free, picklable bundle: what a node needs
    to run that engine's jobs (the spec's folder, its resolved skills, the run's options, the
    engine label and the NAMES of the ``${VAR}`` variables the spec uses, never their values).

    The bundle is packed on first use of :meth:`payload` (or when it is pickled), so an
    executor that runs every job in this process never pays for packing. Packing may raise
    a :class:`~caliper.errors.CaliperError` (exit 2) when the spec's folder is too large to
    ship. On a node, hand the bundle to :func:`caliper.remote.check_node` and
    :func:`caliper.remote.run_job`; its contents are not part of the contract.
    """

    __slots__ = ("_id", "_lock", "_pack", "_payload", "engine", "keep_workdirs")

    def __init__(
        self, engine: str, pack: Callable[[], bytes], *, keep_workdirs: bool = False
    ) -> None:
        """``pack`` makes the payload (called at most once); ``engine`` is the engine's label
        (``backend[:model]``); ``keep_workdirs`` says the run archives each attempt's working
        directory on the machine that runs it (``--keep-workdirs``)."""
        self.engine = engine
        self.keep_workdirs = keep_workdirs
        self._pack: Callable[[], bytes] | None = pack
        self._payload: bytes | None = None
        self._id: str | None = None
        self._lock = threading.Lock()

    @classmethod
    def of_payload(cls, engine: str, payload: bytes, *, keep_workdirs: bool = False) -> RunBundle:
        """A bundle around an already packed ``payload`` (what unpickling makes)."""
        bundle = cls(engine, lambda: payload, keep_workdirs=keep_workdirs)
        bundle._payload = payload
        bundle._pack = None
        return bundle

    def payload(self) -> bytes:
        """The packed bundle (packed now on the first call, thread-safe)."""
        with self._lock:
            if self._payload is None:
                assert self._pack is not None
                self._payload = self._pack()
                self._pack = None
            return self._payload

    @property
    def id(self) -> str:
        """A stable id of the bundle's contents (a node's cache key); packs it if needed."""
        if self._id is None:
            import hashlib

            self._id = hashlib.sha256(self.payload()).hexdigest()[:24]
        return self._id

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled as its payload (packed first) and id, so it can be shipped to a node (which
        then does not hash the payload again for every job)."""
        return (_restored, (self.engine, self.payload(), self.keep_workdirs, self.id))

    def __repr__(self) -> str:
        """The engine only (the payload is large and opaque)."""
        return f"RunBundle(engine={self.engine!r})"


def _restored(engine: str, payload: bytes, keep_workdirs: bool, bundle_id: str) -> RunBundle:
    """A pickled :class:`RunBundle` again."""
    bundle = RunBundle.of_payload(engine, payload, keep_workdirs=keep_workdirs)
    bundle._id = bundle_id
    return bundle


@attrs_classes.frozen
class RunWork:
    """Everything an executor needs to run a run's jobs, as data.

    ``run_here`` runs one job in the calling thread of this process (what the ``local``
    executor's threads call: sandbox, agent, checks, retries, redaction). A remote executor
    instead ships ``bundles[job.engine_key]`` to its node and runs the job there with
    :func:`caliper.remote.run_job`, which gives the same record ``run_here`` would.
    """

    bundles: Mapping[str, RunBundle]
    """Engine key → that engine's bundle (packed only when an executor asks for it)."""
    backend_of: Mapping[str, str]
    """Engine key → the id of the backend its attempts run on (for per-backend limits)."""
    run_here: Callable[[AttemptJob], FinishedAttempt]
    stop_requested: Callable[[], bool]
    """Whether the run was asked to stop (a signal, a fatal error): start nothing more."""
    workers: int
    """``--workers``: how many attempts may run at once in total."""
    max_concurrent: Mapping[str, int] = attrs.field(factory=dict)
    """Per-backend limits (backend id → attempts at once), from ``--max-concurrent``."""


@attrs_classes.frozen
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

    def settle_where_finished(
        self, settle: Callable[[FinishedAttempt], None], lock: threading.RLock
    ) -> bool:
        """Offered by the scheduler before the first :meth:`submit`; return true to accept.

        A session that accepts calls ``settle`` once for every job, in the thread where the
        job finished (or was cancelled), holding ``lock``, after the job stopped counting
        against :meth:`has_room` and before :meth:`next_finished` may hand it back; so
        :meth:`next_finished` hands attempts back in the order they were settled. ``settle``
        may call :meth:`has_room` and :meth:`submit` (the scheduler holds ``lock`` around its
        own calls of them too). :meth:`in_flight` still counts a job until
        :meth:`next_finished` handed it back. Default: decline (the scheduler settles each
        finished attempt itself, after :meth:`next_finished`)."""
        return False


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
