"""How a run ended, and the one place that decides its exit code.

:class:`RunEnding` is what :func:`caliper.runner.run_spec` (and :func:`caliper.run`) return:
the results, where they were saved, and what stopped the run. :meth:`RunEnding.problem` turns
that into the error the run exits with, in one order every caller shares (``caliper run``,
``caliper retry``, ``caliper tune``): the results could not be saved (1) → a fatal error (its
own code: 3 for a setup error, 2 for a judge engine that cannot be resolved) → a stop signal
(128 + its number: 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP) → the ``--max-cost`` budget reached
(4) → every attempt unusable (1) → a failed ``--min-score``/``--min-activation`` bar (3, judged
by the caller) → 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from caliper.errors import CaliperError
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.results.models import RunResults

EXIT_OK = 0
EXIT_ALL_UNUSABLE = 1
EXIT_BUDGET = 4
"""``--max-cost``: the budget was reached; the finished attempts were saved as a partial run."""
EXIT_INTERRUPTED = 130
"""Ctrl-C; a run stopped by another signal exits 128 + its number (SIGTERM 143, SIGHUP 129)."""


class RunInterrupted(CaliperError):
    """A stop signal ended the run; the finished attempts were saved as a partial run."""


class BudgetReached(CaliperError):
    """``--max-cost`` stopped the run: no further attempt was started."""

    exit_code = EXIT_BUDGET


class AllUnusable(CaliperError):
    """Every scored attempt was unusable, so no success rate could be measured."""


@attrs_classes.frozen
class RunEnding:
    """A finished (or stopped) run: its results, where they were saved, what stopped it."""

    results: RunResults
    saved_to: Path | None
    fatal: CaliperError | None = None
    interrupted: bool = False
    save_error: CaliperError | None = None
    """Set when the store could not be written (its message says where the run went)."""
    stop_signal: int | None = None
    """The signal that stopped the run (``SIGINT``, ``SIGTERM``, ``SIGHUP``), if one did."""
    never_started: bool = False
    """No attempt got past the agent's start (``fatal`` says why), so the run was not saved."""
    budget_stop: str | None = None
    """``--max-cost``: why no further attempt was started (the budget and what was spent)."""

    def problem(self, gate_error: CaliperError | None = None) -> CaliperError | None:
        """The error this run exits with (``None``: exit 0). First that applies: the results
        could not be saved (1), a fatal error (its code), a stop signal (128 + its number),
        the ``--max-cost`` budget reached (4), every attempt unusable (1), then
        ``gate_error``, the caller's verdict on the bars."""
        if self.save_error is not None:
            return self.save_error
        if self.fatal is not None:
            return self.fatal
        if self.interrupted:
            from caliper.runner.run.control import signal_label

            label = signal_label(self.stop_signal) if self.stop_signal else "Ctrl-C"
            first = "Interrupted" if label == "Ctrl-C" else f"Stopped by {label}"
            return RunInterrupted(
                f"{first}: the attempts that finished were saved as a partial run.",
                exit_code=128 + self.stop_signal if self.stop_signal else EXIT_INTERRUPTED,
            )
        if self.budget_stop is not None:
            return BudgetReached(
                f"Stopped: {self.budget_stop}; the attempts that finished were saved as a "
                "partial run.",
                hint="Raise --max-cost to measure more, or resume the run with a larger budget "
                "(`caliper run SPEC --resume --max-cost USD`).",
            )
        if self.all_unusable:
            return AllUnusable(
                "Every attempt was unusable (infra_error or judge_error, or timeout with "
                "--timeouts unusable), so no success rate could be measured.",
                hint="The reasons are in the report above (add --verbose for each attempt).",
                exit_code=EXIT_ALL_UNUSABLE,
            )
        return gate_error

    @property
    def all_unusable(self) -> bool:
        """Attempts ran and none was scored (``pass``, ``task_fail``, ``cheat``, or
        ``timeout`` unless the run leaves timeouts out) or ``not_checked``."""
        timeouts = self.results.meta.timeouts
        records = [a for task in self.results.tasks for a in task.attempts]
        return bool(records) and not any(
            r.outcome.scored(timeouts) or r.outcome.value == "not_checked" for r in records
        )

    @property
    def exit_code(self) -> int:
        """The exit code of :meth:`problem` (bars aside), 0 when there is none."""
        problem = self.problem()
        return problem.exit_code if problem is not None else EXIT_OK
