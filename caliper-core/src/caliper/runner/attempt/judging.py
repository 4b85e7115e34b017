"""Turning a completed attempt plus the task's judges into checks and an outcome.

Outcome judges (``scores_outcome=True``) decide pass/fail; the judge that declares
``scores_activation`` (the built-in ``activates``) feeds the separate activation scoreboard.
Local (non-LLM) judges run first: once one has failed or errored, LLM judges are not run (and
recorded as such), since they could not change the outcome and cost tokens.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from caliper.errors import CaliperError
from caliper.results.outcome import Outcome
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.host.engine import Engine
    from caliper.plugin.judge import Judge, JudgeContext, Verdict
    from caliper.results.models import CheckRecord
    from caliper.spec.model import Task

NOT_RUN_REASON = "not run: a local check already failed"
NOT_RUN_CHEAT = "not run: the attempt read a forbidden file"
NOT_RUN_NO_WORKDIR = "not run: the agent removed its working directory"
WORKDIR_REMOVED_REASON = (
    "the agent removed its own working directory, so the checks could not find its work"
)


class FatalJudgeError(Exception):
    """Stops the whole run: the judge engine itself cannot be used (bad --judge-model)."""

    def __init__(self, error: CaliperError):
        super().__init__(error.message)
        self.error = error


class LazyEngine:
    """Resolves ``--judge-model`` on first use only, once, shared by all attempts."""

    def __init__(self, resolve: Callable[[], Engine]):
        self._resolve = resolve
        self._lock = threading.Lock()
        self._engine: Engine | None = None
        self._error: CaliperError | None = None
        self._cli: tuple[Path | None] | None = None

    @property
    def engine(self) -> Engine | None:
        """The resolved engine, or ``None`` when no LLM judge ever asked for it."""
        return self._engine

    def __call__(self) -> Engine:
        with self._lock:
            if self._engine is None and self._error is None:
                try:
                    self._engine = self._resolve()
                except CaliperError as exc:
                    self._error = exc
            if self._error is not None:
                raise FatalJudgeError(self._error)
            assert self._engine is not None
            return self._engine

    def cli_path(self) -> Path | None:
        """The judge engine's CLI, found once per run (``None``: not installed; the backend
        then reports it as a setup error)."""
        engine = self()
        with self._lock:
            if self._cli is None:
                self._cli = (engine.backend.find_cli(),)
            return self._cli[0]


@attrs_classes.frozen
class Judgement:
    """What the judges made of one completed attempt."""

    outcome: Outcome
    reason: str | None
    checks: list[CheckRecord]
    activation_passed: bool | None


def _record(key: str, verdict: Verdict) -> CheckRecord:
    from caliper.results.models import CheckRecord

    return CheckRecord(
        key=key,
        passed=verdict.passed,
        reason=verdict.reason,
        error=verdict.error,
        details=dict(verdict.details),
        usage=verdict.usage,
        backend=verdict.backend,
        model=verdict.model,
        prompt_version=verdict.prompt_version,
    )


def _check(judge: Judge, context: JudgeContext) -> CheckRecord:
    from caliper.plugin.verdict import Verdict

    try:
        return _record(judge.key, judge.check(context))
    except FatalJudgeError:
        raise
    except CaliperError as exc:
        return _record(judge.key, Verdict(passed=None, error=exc.render()))
    except Exception as exc:  # a judge plugin bug must not crash the run
        return _record(judge.key, Verdict(passed=None, error=f"{type(exc).__name__}: {exc}"))


def _decides_outcome(judge: Judge) -> bool:
    """An activation judge never decides pass/fail, whatever its ``scores_outcome`` says."""
    return judge.scores_outcome and not judge.scores_activation


def judge_attempt(
    task: Task,
    judges: Mapping[str, Judge],
    make_context: Callable[[str], JudgeContext],
    *,
    llm_allowed: bool = True,
    workdir_removed: bool = False,
) -> Judgement:
    """Run the task's judges on a completed attempt and decide its outcome.

    With ``llm_allowed`` false (a cheat: the outcome is already decided) LLM judges are
    recorded as not run. With ``workdir_removed`` (the agent deleted its own working
    directory) no outcome judge runs: there is no work left to check, so the attempt is a
    task failure saying so; scoreboard judges (``activates:``) still run on the transcript.
    """
    from caliper.results.models import CheckRecord

    records: dict[str, CheckRecord] = {}
    outcome_keys = [k for k in task.checks if k in judges and _decides_outcome(judges[k])]
    other_keys = [k for k in task.checks if k in judges and not _decides_outcome(judges[k])]
    if workdir_removed:
        return _without_workdir(task, judges, make_context, outcome_keys, other_keys)
    local = [k for k in outcome_keys if not judges[k].uses_llm]
    llm = [k for k in outcome_keys if judges[k].uses_llm]
    for key in local:
        records[key] = _check(judges[key], make_context(key))
    local_failed = any(records[k].passed is not True for k in local)
    for key in llm:
        if local_failed or not llm_allowed:
            reason = NOT_RUN_REASON if llm_allowed else NOT_RUN_CHEAT
            records[key] = CheckRecord(
                key=key, passed=None, reason=reason, details={"not_run": True}
            )
        else:
            records[key] = _check(judges[key], make_context(key))
    for key in other_keys:
        records[key] = _check(judges[key], make_context(key))

    ran = [records[k] for k in outcome_keys if not records[k].details.get("not_run")]
    if not outcome_keys:
        outcome, reason = Outcome.NOT_CHECKED, None
    elif any(r.passed is None for r in ran):
        outcome = Outcome.JUDGE_ERROR
        reason = "; ".join(f"{r.key}: {r.error or 'no verdict'}" for r in ran if r.passed is None)
    elif all(r.passed for r in ran):
        outcome, reason = Outcome.PASS, None
    else:
        outcome = Outcome.TASK_FAIL
        reason = "; ".join(f"{r.key}: {r.reason or 'failed'}" for r in ran if r.passed is False)

    return _judgement(task, records, outcome, reason)


def _judgement(
    task: Task, records: Mapping[str, CheckRecord], outcome: Outcome, reason: str | None
) -> Judgement:
    activation = records.get(task.activation_key) if task.activation_key else None
    return Judgement(
        outcome=outcome,
        reason=reason,
        checks=[records[k] for k in task.checks if k in records],
        activation_passed=activation.passed if activation is not None else None,
    )


def _without_workdir(
    task: Task,
    judges: Mapping[str, Judge],
    make_context: Callable[[str], JudgeContext],
    outcome_keys: list[str],
    other_keys: list[str],
) -> Judgement:
    """The judgement of an attempt whose agent deleted its working directory."""
    from caliper.results.models import CheckRecord

    records = {
        key: CheckRecord(
            key=key,
            passed=None,
            reason=NOT_RUN_NO_WORKDIR,
            details={"not_run": True, "workdir_removed": True},
        )
        for key in outcome_keys
    }
    for key in other_keys:
        records[key] = _check(judges[key], make_context(key))
    if not outcome_keys:
        return _judgement(task, records, Outcome.NOT_CHECKED, None)
    return _judgement(task, records, Outcome.TASK_FAIL, WORKDIR_REMOVED_REASON)
