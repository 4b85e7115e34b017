"""How one attempt ended (:class:`Outcome`) and the run-level policy for timeouts.

Kept apart from :mod:`caliper.results.models` (which re-exports both) so that what only
formats or counts outcomes (``caliper list``, the report's number formats) does not build the
whole results schema at start-up.
"""

from __future__ import annotations

import enum

TIMEOUTS_FAILURE = "failure"
"""``RunMeta.timeouts``: a timed-out attempt is a failure of the attempt (the default)."""
TIMEOUTS_UNUSABLE = "unusable"
"""``RunMeta.timeouts``: a timed-out attempt is left out, like an infra error (opt-out)."""
TIMEOUT_POLICIES = (TIMEOUTS_FAILURE, TIMEOUTS_UNUSABLE)


class Outcome(str, enum.Enum):
    """The typed outcome of one attempt."""

    PASS = "pass"
    TASK_FAIL = "task_fail"
    CHEAT = "cheat"
    INFRA_ERROR = "infra_error"
    TIMEOUT = "timeout"
    JUDGE_ERROR = "judge_error"
    NOT_CHECKED = "not_checked"

    @property
    def usable(self) -> bool:
        """Counts toward the success-rate denominator."""
        return self in (Outcome.PASS, Outcome.TASK_FAIL, Outcome.CHEAT)

    @property
    def unusable(self) -> bool:
        """Something went wrong and the attempt got no verdict from a check."""
        return self in (Outcome.INFRA_ERROR, Outcome.TIMEOUT, Outcome.JUDGE_ERROR)

    def scored(self, timeouts: str = TIMEOUTS_FAILURE) -> bool:
        """Counts toward the success-rate denominator under a run's ``timeouts`` policy: a
        timeout is a failed attempt (the agent did not finish in the time allowed) unless
        ``timeouts`` is ``unusable``."""
        return self.usable or (self is Outcome.TIMEOUT and timeouts != TIMEOUTS_UNUSABLE)

    def left_out(self, timeouts: str = TIMEOUTS_FAILURE) -> bool:
        """Left out of the rates under ``timeouts`` (infra and judge errors, and timeouts when
        ``timeouts`` is ``unusable``): the attempt got no fair shot."""
        return self.unusable and not self.scored(timeouts)
