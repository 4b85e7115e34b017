"""One place decides a run's exit code: ``RunEnding.problem`` (the CLI, ``retry`` and ``tune``
only map it). Issue 14: ``RunReport.exit_code`` and ``caliper run`` disagreed (a stopped run
whose results could not be saved: 130 from one, 1 from the other)."""

from __future__ import annotations

import signal

from caliper.errors import CaliperError, SetupError
from caliper.results.models import AttemptRecord, Outcome, RunMeta, RunResults, TaskResult
from caliper.results.store import ResultsWriteError
from caliper.runner import RunEnding
from caliper.runner.run.ending import AllUnusable, RunInterrupted


def _results(*outcomes: Outcome) -> RunResults:
    attempts = [
        AttemptRecord(task_name="t", attempt=n, outcome=o) for n, o in enumerate(outcomes, 1)
    ]
    meta = RunMeta(run_id="r", spec_name="s", spec_path="s.eval.yaml", started_at="now")
    return RunResults(meta=meta, tasks=[TaskResult(name="t", index=0, k=3, attempts=attempts)])


def test_a_save_error_decides_even_for_a_stopped_run():
    save_error = ResultsWriteError("could not save; the run went to /tmp/rescued.json")
    ending = RunEnding(
        results=_results(Outcome.PASS),
        saved_to=None,
        interrupted=True,
        stop_signal=signal.SIGINT,
        save_error=save_error,
    )
    assert ending.problem() is save_error
    assert ending.exit_code == save_error.exit_code == 1


def test_a_fatal_error_comes_before_the_signal_and_the_outcomes():
    fatal = SetupError("the CLI cannot log in")
    ending = RunEnding(
        results=_results(Outcome.INFRA_ERROR),
        saved_to=None,
        fatal=fatal,
        interrupted=True,
        stop_signal=signal.SIGTERM,
    )
    assert ending.problem() is fatal and ending.exit_code == 3


def test_a_signal_exits_128_plus_its_number_with_its_name():
    for signum, code, first in [
        (signal.SIGINT, 130, "Interrupted:"),
        (signal.SIGTERM, 143, "Stopped by SIGTERM:"),
        (signal.SIGHUP, 129, "Stopped by SIGHUP:"),
    ]:
        ending = RunEnding(
            results=_results(Outcome.PASS), saved_to=None, interrupted=True, stop_signal=signum
        )
        problem = ending.problem()
        assert isinstance(problem, RunInterrupted)
        assert problem.exit_code == ending.exit_code == code
        assert problem.message.startswith(first)


def test_unusable_attempts_exit_1_and_the_gate_comes_last():
    unusable = RunEnding(results=_results(Outcome.INFRA_ERROR, Outcome.JUDGE_ERROR), saved_to=None)
    assert isinstance(unusable.problem(), AllUnusable) and unusable.exit_code == 1
    # a timeout is a failed attempt (a measured 0 %) unless the run left timeouts out
    timed_out = _results(Outcome.INFRA_ERROR, Outcome.TIMEOUT, Outcome.JUDGE_ERROR)
    assert RunEnding(results=timed_out, saved_to=None).problem() is None
    timed_out.meta.timeouts = "unusable"
    assert isinstance(RunEnding(results=timed_out, saved_to=None).problem(), AllUnusable)
    gate = CaliperError("Gate failed: 1 of 1 bar not met", exit_code=3)
    assert isinstance(unusable.problem(gate), AllUnusable)
    for outcomes in [(Outcome.INFRA_ERROR, Outcome.TASK_FAIL), (Outcome.NOT_CHECKED,), ()]:
        usable = RunEnding(results=_results(*outcomes), saved_to=None)
        assert usable.problem() is None and usable.exit_code == 0
        assert usable.problem(gate) is gate
