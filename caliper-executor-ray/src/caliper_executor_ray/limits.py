"""Per-backend limits shared by every ``caliper run`` on one cluster: a small named actor.

``--max-concurrent BACKEND=N`` must hold for the cluster, not only for one run: two shards of
a CI matrix sent to the same cluster share the provider's rate limit. Each run's session asks
the actor ``caliper-backend-limits`` (namespace ``caliper``, created by the first run that
needs it, detached so it outlives that run) for a slot before it submits an attempt of a
limited backend, and gives it back when the attempt is handed back. Slots are leases: a run
renews its own while it goes on, so the slots of a run that was killed outright (``kill -9``,
a lost machine) free themselves after :data:`LEASE_SECONDS`.
"""

from __future__ import annotations

import time
from typing import Any

ACTOR_NAME = "caliper-backend-limits"
LEASE_SECONDS = 120.0
RENEW_SECONDS = 30.0
CALL_SECONDS = 30.0


class BackendLimits:
    """The actor's state: who holds a slot of which backend, until when (monotonic time)."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[str, float]] = {}

    def _expire(self) -> None:
        now = time.monotonic()
        for holder in [h for h, (_b, until) in self._held.items() if until < now]:
            del self._held[holder]

    def acquire(self, backend: str, limit: int, holder: str) -> bool:
        """Take a slot of ``backend`` for ``holder`` when fewer than ``limit`` are held."""
        self._expire()
        if holder in self._held:
            return True
        used = sum(1 for b, _until in self._held.values() if b == backend)
        if used >= limit:
            return False
        self._held[holder] = (backend, time.monotonic() + LEASE_SECONDS)
        return True

    def renew(self, holders: list[str]) -> None:
        """Extend the leases of ``holders`` (a run that is still going)."""
        until = time.monotonic() + LEASE_SECONDS
        for holder in holders:
            if holder in self._held:
                self._held[holder] = (self._held[holder][0], until)

    def release(self, holders: list[str]) -> None:
        """Give the slots of ``holders`` back."""
        for holder in holders:
            self._held.pop(holder, None)

    def held(self, backend: str) -> int:
        """How many slots of ``backend`` are held now."""
        self._expire()
        return sum(1 for b, _until in self._held.values() if b == backend)


class SharedLimits:
    """One run's use of the cluster-wide limits (called from the scheduler's thread)."""

    def __init__(self, ray: Any, run_id: str):
        self._ray = ray
        actor = ray.remote(num_cpus=0, max_restarts=-1)(BackendLimits)
        self._actor = actor.options(
            name=ACTOR_NAME, namespace="caliper", lifetime="detached", get_if_exists=True
        ).remote()
        self._run = run_id
        self._held: set[str] = set()
        self._renewed = time.monotonic()

    def holder(self, key: str) -> str:
        """The lease name of one attempt of this run."""
        return f"{self._run}/{key}"

    def acquire(self, backend: str, limit: int, key: str) -> bool:
        """A slot of ``backend`` for attempt ``key`` (``False``: the cluster is at the limit)."""
        holder = self.holder(key)
        asked = self._actor.acquire.remote(backend, limit, holder)
        got = self._ray.get(asked, timeout=CALL_SECONDS)
        if got:
            self._held.add(holder)
        return bool(got)

    def release(self, key: str) -> None:
        """Give attempt ``key``'s slot back (nothing when it held none)."""
        holder = self.holder(key)
        if holder in self._held:
            self._held.discard(holder)
            self._actor.release.remote([holder])

    def keep_alive(self) -> None:
        """Renew this run's leases now and then (cheap to call on every poll)."""
        if self._held and time.monotonic() - self._renewed > RENEW_SECONDS:
            self._actor.renew.remote(sorted(self._held))
            self._renewed = time.monotonic()

    def close(self) -> None:
        """Give every slot this run still holds back."""
        if self._held:
            self._ray.get(self._actor.release.remote(sorted(self._held)), timeout=CALL_SECONDS)
            self._held.clear()
