"""Automatic retry of an attempt after a transient failure (``caliper run --retries N``).

An attempt whose outcome is ``infra_error`` (a rate limit, an overloaded or unreachable
provider, a crashed CLI) — but not a failed ``setup:``, which would fail the same way again —
is run again in a fresh sandbox, up to N more times. Between tries caliper waits with
exponential backoff and full jitter (a random time between 0 and ``base × 2^(try-1)``
seconds, capped), or exactly what the agent CLI asked for when it reported a ``Retry-After``
(capped too). A stop (Ctrl-C, a signal) cuts the wait short.

Every earlier try is kept in the attempt's ``tries`` (outcome, reason, duration, tokens, how
long caliper waited), so what was spent stays visible; the attempt itself is its last try. A
rate-limited attempt whose tries are used up stays ``infra_error`` (unusable): a rate limit is
never a task failure. ``timeout`` and ``judge_error`` are not retried inside a run (a timeout
already cost the whole budget; a judge error is not the agent's); ``caliper retry`` re-runs
them on demand.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from caliper.plugin.executor import FinishedAttempt
from caliper.results.outcome import Outcome
from caliper.runner.run.options import DEFAULT_RETRIES
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.results.models import AttemptRecord, TryRecord

BASE_SECONDS = 2.0
MAX_BACKOFF_SECONDS = 60.0
MAX_RETRY_AFTER_SECONDS = 300.0


@attrs_classes.frozen
class RetryPolicy:
    """How many more tries a transient failure gets and how long to wait between them."""

    retries: int = DEFAULT_RETRIES
    base_seconds: float = BASE_SECONDS
    max_backoff_seconds: float = MAX_BACKOFF_SECONDS
    max_retry_after_seconds: float = MAX_RETRY_AFTER_SECONDS

    def delay(self, retry_number: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds to wait before retry ``retry_number`` (1-based): ``retry_after`` when the
        CLI gave one (capped), else full jitter over ``base × 2^(retry_number-1)`` (capped)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after_seconds)
        ceiling = min(self.max_backoff_seconds, self.base_seconds * 2 ** (retry_number - 1))
        return rng.uniform(0, ceiling)


def is_transient(record: AttemptRecord) -> bool:
    """True for a failure worth another try: an infra error that is not a failed setup."""
    return record.outcome is Outcome.INFRA_ERROR and not record.setup_failed


def as_try(record: AttemptRecord, waited: float | None = None) -> TryRecord:
    """The summary of one try kept in an attempt's history."""
    from caliper.results.models import TryRecord

    return TryRecord(
        outcome=record.outcome,
        reason=record.reason,
        duration_seconds=record.duration_seconds,
        usage=record.usage,
        model=record.model,
        retry_after=record.retry_after,
        waited_seconds=None if waited is None else round(waited, 3),
    )


def run_with_retries(
    run: Callable[[], FinishedAttempt],
    policy: RetryPolicy,
    stop: threading.Event,
    rng: random.Random | None = None,
) -> FinishedAttempt:
    """Run one attempt, again after each transient failure (see the module docstring)."""
    earlier: list[TryRecord] = []
    report = run()
    for retry_number in range(1, policy.retries + 1):
        record = report.record
        if record is None or report.fatal is not None or not is_transient(record):
            break
        rng = rng or random.Random()  # seeded from the OS: made only when a retry waits
        wait = policy.delay(retry_number, record.retry_after, rng)
        earlier.append(as_try(record, wait))
        if stop.wait(wait):  # stopping: the last try is what this attempt got
            earlier.pop()
            break
        following = run()
        if following.record is None:  # stopped mid-try: keep the finished one
            earlier.pop()
            report.fatal = following.fatal
            break
        report = following
    if earlier and report.record is not None:
        report.record.tries = [*earlier, *report.record.tries]
    return report
