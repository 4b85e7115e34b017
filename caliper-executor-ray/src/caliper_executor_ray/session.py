"""One run's attempts as Ray tasks: capacity, streaming results back, cancelling.

Capacity is counted here, on the driver, which alone submits the run's tasks: at most
``--workers`` attempts in flight across the whole cluster; and at most
``--max-concurrent BACKEND=N`` of one backend on the whole cluster, counted by a small named
actor every run on the cluster shares (:mod:`.limits`), so a provider's rate limit holds
however many nodes and runs there are. Each task asks Ray for one CPU, so a node runs at most
as many attempts at once as it has CPUs; tasks are spread over the nodes.
"""

from __future__ import annotations

import contextlib
from typing import Any

from caliper.plugin.executor import AttemptJob, ExecutorSession, FinishedAttempt, RunWork


class RaySession(ExecutorSession):
    """The attempts of one run on a Ray cluster (every method runs on the scheduler's thread)."""

    def __init__(self, ray: Any, work: RunWork, bundles: dict[str, Any], disconnect: bool):
        import uuid

        from caliper_executor_ray.limits import SharedLimits
        from caliper_executor_ray.remote import attempt_task

        self._ray = ray
        self._work = work
        self._bundles = bundles
        """Engine key → the object reference of its bundle (one ``ray.put`` per run)."""
        self._task = attempt_task.options(scheduling_strategy="SPREAD")
        self._disconnect = disconnect
        self._pending: dict[Any, AttemptJob] = {}
        self._by_backend: dict[str, int] = {}
        self._cancelled = False
        self._workers = max(1, work.workers)
        self._limits = SharedLimits(ray, uuid.uuid4().hex) if work.max_concurrent else None

    def has_room(self, job: AttemptJob) -> bool:
        """Fewer than ``--workers`` in flight, and ``job``'s backend under its limit."""
        if self._cancelled or len(self._pending) >= self._workers:
            return False
        limit = self._work.max_concurrent.get(job.backend_id)
        if limit is None:
            return True
        if self._by_backend.get(job.backend_id, 0) >= limit:
            return False
        assert self._limits is not None
        return self._limits.acquire(job.backend_id, limit, _key(job))

    def submit(self, job: AttemptJob) -> None:
        """Start ``job`` as a Ray task (returns at once)."""
        ref = self._task.remote(self._bundles[job.engine_key], job)
        self._pending[ref] = job
        self._by_backend[job.backend_id] = self._by_backend.get(job.backend_id, 0) + 1

    def next_finished(self, timeout: float) -> FinishedAttempt | None:
        """The first task to finish within ``timeout`` seconds, as a finished attempt."""
        if self._limits is not None:
            self._limits.keep_alive()
        if not self._pending:
            return None
        ready, _ = self._ray.wait(list(self._pending), num_returns=1, timeout=timeout)
        if not ready:
            return None
        ref = ready[0]
        job = self._pending.pop(ref)
        self._by_backend[job.backend_id] -= 1
        if self._limits is not None:
            self._limits.release(_key(job))
        return self._collect(ref, job)

    def _collect(self, ref: Any, job: AttemptJob) -> FinishedAttempt:
        from ray.exceptions import TaskCancelledError

        try:
            return self._ray.get(ref)
        except TaskCancelledError:
            return FinishedAttempt(job=job, record=None)
        except Exception as exc:  # the worker or its node died, or the task failed
            if self._cancelled:
                return FinishedAttempt(job=job, record=None)
            return lost_attempt(job, exc)

    def in_flight(self) -> int:
        """Tasks submitted and not yet handed back."""
        return len(self._pending)

    def cancel(self) -> None:
        """Ask every task to stop (queued ones never start; running ones stop their attempt
        and clean up on their node). Never forced: that would kill a worker whose agent
        processes would then live on."""
        self._cancelled = True
        for ref in list(self._pending):
            try:
                self._ray.cancel(ref, force=False)
            except Exception:  # already finished, or the cluster is gone
                continue

    def close(self) -> None:
        """Forget the bundles and disconnect (when this run connected)."""
        self._bundles.clear()
        if self._limits is not None:
            with contextlib.suppress(Exception):  # the cluster may be gone; leases expire
                self._limits.close()
        if self._disconnect:
            self._ray.shutdown()


def _key(job: AttemptJob) -> str:
    return f"{job.engine_key}/{job.task_name}/{job.number}"


def lost_attempt(job: AttemptJob, error: BaseException) -> FinishedAttempt:
    """The finished attempt of a job whose task died on its node: an infra error, retryable
    with ``caliper retry`` (:func:`caliper.remote.lost_job`)."""
    from caliper.remote import lost_job

    return lost_job(job, error, what="the Ray task")
