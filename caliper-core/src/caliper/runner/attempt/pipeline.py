"""One attempt of one task, from a fresh sandbox to a saved-ready :class:`AttemptRecord`.

Order: sandbox → setup → install skills → MCP config → HOME seeding → agent → judges → cleanup
→ delete the sandbox. Cleanup always runs (even after a failed setup, a crash or Ctrl-C) and
the sandbox is always deleted.

The steps before the agent are methods of one
:class:`~caliper.runner.attempt.environment.AttemptEnvironment`, each run once. With a
:class:`~caliper.runner.attempt.preparation.Preparer` (the ``local`` executor's runs) the
attempt takes one made ahead, while the worker's previous agent ran: the sandbox, and for a
task without ``setup:`` the install, the MCP config and the HOME seeding (and a judge call's
sandbox); the same calls then return what was done, in the same order.
"""

from __future__ import annotations

import contextlib
import datetime
import re
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from caliper.errors import CaliperError, SetupError
from caliper.plugin.attempt import AgentStatus, AttemptRequest, AttemptResult, AttemptSandbox
from caliper.plugin.executor import AttemptJob, FinishedAttempt
from caliper.results.outcome import Outcome
from caliper.runner.attempt.environment import AttemptEnvironment, Installed
from caliper.runner.attempt.forbidden import find_forbidden_reads
from caliper.runner.attempt.judge_calls import judge_ask
from caliper.runner.attempt.judging import FatalJudgeError, Judgement, LazyEngine, judge_attempt
from caliper.runner.attempt.sandbox import describe_shell_failure, run_shell
from caliper.runner.run.control import RunController, Stopped
from caliper.system.process import after_start

if TYPE_CHECKING:
    from caliper.plugin.judge import JudgeContext
    from caliper.results.models import AttemptRecord
    from caliper.runner.attempt.preparation import Preparer
    from caliper.runner.attempt.workdirs import WorkdirKeeper
    from caliper.runner.run.prepare import PreparedRun
    from caliper.spec.model import Task

_STATUS_OUTCOME = {
    AgentStatus.TIMEOUT: Outcome.TIMEOUT,
    AgentStatus.INFRA_ERROR: Outcome.INFRA_ERROR,
    AgentStatus.TASK_FAILED: Outcome.TASK_FAIL,
    AgentStatus.SETUP_ERROR: Outcome.INFRA_ERROR,
}


def _status_reason(result: AttemptResult) -> str:
    if result.error:
        return result.error
    if result.status is AgentStatus.TIMEOUT:
        return "the agent exceeded its time budget and was killed"
    return f"the agent ended with status {result.status.value}"


def _judge_context_factory(
    prepared: PreparedRun,
    task: Task,
    result: AttemptResult,
    env: AttemptEnvironment,
    installed_names: tuple[str, ...],
    judge_engine: LazyEngine,
) -> Callable[[str], JudgeContext]:
    sandbox = env.sandbox()
    ask = judge_ask(judge_engine, env.judge_sandbox, prepared.options.judge_seconds)
    tools = prepared.engine.backend.tool_names()

    def make(key: str) -> JudgeContext:
        from caliper.plugin.verdict import JudgeContext

        return JudgeContext(
            task_name=task.name,
            task_prompt=task.prompt,
            value=task.checks[key],
            attempt=result,
            workdir=sandbox.workdir,
            spec_dir=prepared.spec.directory,
            declared_skills=tuple(s.name for s in prepared.skills),
            installed_skills=installed_names,
            timeout=prepared.options.judge_seconds,
            ask=ask,
            agent_env=dict(sandbox.base_env),
            tools=tools,
        )

    return make


def restore_workdir(sandbox: AttemptSandbox) -> bool:
    """Recreate the attempt's working directory (empty) when it is gone; true if it was.

    An agent may delete its own working directory (``rm -rf "$PWD"``); the checks and the
    task's ``cleanup:`` run in it, so it is put back before they start.
    """
    workdir = sandbox.workdir
    if workdir.is_dir():
        return False
    with contextlib.suppress(OSError):
        if workdir.is_symlink() or workdir.exists():
            workdir.unlink()  # something that is not a folder took its place
    with contextlib.suppress(OSError):
        workdir.mkdir(parents=True, exist_ok=True)
    return True


def _failed_record(task: Task, number: int, reason: str, *, setup: bool = False) -> AttemptRecord:
    from caliper.results.models import AttemptRecord

    return AttemptRecord(
        task_name=task.name,
        attempt=number,
        outcome=Outcome.INFRA_ERROR,
        reason=reason,
        error=reason,
        setup_failed=setup,
        **_conversation_fields(task),
    )


def _conversation_fields(task: Task) -> dict[str, str | None]:
    """The record's note of the planted conversation the attempt started from."""
    if task.conversation is None:
        return {}
    return {"history": task.conversation.declared_as, "history_sha256": task.conversation.sha256}


def _call_backend(prepared: PreparedRun, request: AttemptRequest) -> tuple[AttemptResult, float]:
    """Run the agent; a backend that raises is recorded (setup or infra error), not raised."""
    started = time.monotonic()
    try:
        result = prepared.engine.backend.run_attempt(request)
    except SetupError as exc:
        result = AttemptResult(status=AgentStatus.SETUP_ERROR, error=exc.render())
    except Exception as exc:  # a backend bug is recorded, not raised at the user
        result = AttemptResult(
            status=AgentStatus.INFRA_ERROR,
            error=f"the backend crashed: {type(exc).__name__}: {exc}",
        )
    return result, time.monotonic() - started


def _observed(
    task: Task, number: int, result: AttemptResult, elapsed: float, installed_names: tuple[str, ...]
) -> AttemptRecord:
    """The record of what the agent did, before any outcome is decided."""
    from caliper.results.models import AttemptRecord

    duration = result.duration_seconds
    return AttemptRecord(
        task_name=task.name,
        attempt=number,
        outcome=Outcome.INFRA_ERROR,
        duration_seconds=duration if duration is not None else round(elapsed, 3),
        usage=result.usage,
        final_answer=result.final_answer,
        transcript=list(result.transcript),
        activated=_observed_activation(result, installed_names),
        undeclared=list(result.undeclared or ()),
        built_in=list(result.built_in or ()),
        user_setup=result.user_setup.as_lists() if result.user_setup is not None else None,
        model=result.model,
        error=result.error,
        **_conversation_fields(task),
        retry_after=result.retry_after,
    )


def _observed_activation(
    result: AttemptResult, installed_names: tuple[str, ...]
) -> list[str] | None:
    """The skills the agent loaded, or ``None`` when that was not observable: nothing was
    installed, the agent never ran (a setup error), or the run did not end normally and its
    transcript shows no load (an infra error or timeout may cut the transcript short, so an
    empty list there would be a made-up "nothing fired"; a load it does show happened).
    Scores never count a crashed attempt's activation either way."""
    if result.activated is None or not installed_names:
        return None
    if result.status is AgentStatus.SETUP_ERROR:
        return None
    if result.status in (AgentStatus.INFRA_ERROR, AgentStatus.TIMEOUT):
        return list(result.activated) or None
    return list(result.activated)


def uses_judge_calls(prepared: PreparedRun, task: Task) -> bool:
    """Whether ``task`` has a check whose judge may ask a model (``uses_llm``)."""
    judges = prepared.judges
    return any(key in judges and judges[key].uses_llm for key in task.checks)


def _prepare_next(
    preparer: Preparer | None,
    prepared: PreparedRun,
    engine_key: str,
    task: Task,
    judge_engine: LazyEngine,
) -> None:
    """Have the worker's next attempt made ahead, like this one (same engine, same kind)."""
    if preparer is None:
        return
    judge = judge_engine.engine  # seeded ahead only once a judge call resolved it
    install = not task.setup
    preparer.ahead(
        engine_key,
        install,
        lambda: AttemptEnvironment(prepared).prepare_ahead(
            install=install,
            judge_backend=judge.backend if judge is not None else None,
            with_judge=install and uses_judge_calls(prepared, task),
        ),
    )


def _setup_failure(
    prepared: PreparedRun, task: Task, sandbox: AttemptSandbox, controller: RunController
) -> str | None:
    """Run the task's ``setup:`` (when it has one); why it failed, or ``None``."""
    if not task.setup:
        return None
    budget = prepared.options.setup_timeout
    shell = run_shell(task.setup, sandbox, timeout=budget, spec_dir=prepared.spec.directory)
    controller.check()
    return describe_shell_failure("setup", shell, budget)


def _request(
    prepared: PreparedRun, task: Task, sandbox: AttemptSandbox, installed: Installed
) -> AttemptRequest:
    """What the backend is asked to run: ``task`` in ``sandbox`` with what was installed."""
    native_mcp = installed.native_mcp
    return AttemptRequest(
        prompt=task.prompt,
        model=prepared.engine.model,
        sandbox=sandbox,
        timeout=prepared.options.timeout,
        skills=tuple(installed.skills),
        mcp=native_mcp,
        conversation=task.conversation,
        user_customizations=prepared.user_customizations,
        mcp_names=tuple(server.name for server in prepared.mcp.servers) if native_mcp else (),
        cli_path=prepared.cli_path,
    )


def _agent_steps(
    prepared: PreparedRun,
    task: Task,
    job: AttemptJob,
    env: AttemptEnvironment,
    controller: RunController,
    judge_engine: LazyEngine,
    patterns: Sequence[re.Pattern[str]],
    keeper: WorkdirKeeper | None = None,
    preparer: Preparer | None = None,
) -> tuple[AttemptRecord, CaliperError | None]:
    """Setup, install, run the agent and judge it (everything but cleanup)."""
    number = job.number
    failure = _setup_failure(prepared, task, env.sandbox(), controller)
    if failure:
        return _failed_record(task, number, failure, setup=True), None
    installed = env.installed_skills()
    if installed.failure is not None:
        return _failed_record(task, number, installed.failure), None
    controller.check()
    sandbox = env.sandbox()  # seeded when that step was done ahead, else the backend seeds it
    request = _request(prepared, task, sandbox, installed)
    # the next attempt is made once the agent is running (its start is not slowed by it)
    with after_start(lambda: _prepare_next(preparer, prepared, job.engine_key, task, judge_engine)):
        result, elapsed = _call_backend(prepared, request)
    controller.check()

    installed_names = tuple(skill.name for skill in installed.skills)
    record = _observed(task, number, result, elapsed, installed_names)
    if result.status is AgentStatus.SETUP_ERROR:
        reason = result.error or f"The {prepared.engine.backend_id} CLI cannot run."
        record.reason = reason
        return record, SetupError(prepared.secrets.redact(reason) or reason)
    if result.status is not AgentStatus.COMPLETED:
        record.outcome = _STATUS_OUTCOME[result.status]
        record.reason = _status_reason(result)
        return record, None
    forbidden = find_forbidden_reads(result.transcript, patterns)
    workdir_removed = restore_workdir(sandbox)
    if keeper is not None:  # what the agent left, before any check runs in it
        record.workdir_archive, record.workdir_note = keeper.keep(
            task.name, number, sandbox.workdir
        )
    judged = prepared.secrets.redact_result(result)  # judges (and judge models) never see secrets
    judgement = judge_attempt(
        task,
        prepared.judges,
        _judge_context_factory(prepared, task, judged, env, installed_names, judge_engine),
        llm_allowed=not forbidden,
        workdir_removed=workdir_removed and not forbidden,
    )
    controller.check()  # a judge cut short by Ctrl-C decided nothing
    _decide(record, judgement, forbidden)
    return record, None


def _decide(record: AttemptRecord, judgement: Judgement, forbidden: list[str]) -> None:
    """Put the judges' verdict on ``record``; a forbidden read makes it a cheat whatever
    the checks said."""
    record.checks = judgement.checks
    record.activation_passed = judgement.activation_passed
    if forbidden:
        record.outcome = Outcome.CHEAT
        record.forbidden_reads = forbidden
        record.reason = f"read a forbidden file: {forbidden[0]}"
    else:
        record.outcome = judgement.outcome
        record.reason = judgement.reason


def _redact(record: AttemptRecord, prepared: PreparedRun) -> None:
    secrets = prepared.secrets
    if not secrets.values:
        return
    record.final_answer = secrets.redact(record.final_answer)
    record.reason = secrets.redact(record.reason)
    record.error = secrets.redact(record.error)
    if record.transcript is not None:
        record.transcript = secrets.redact_turns(record.transcript)
    record.forbidden_reads = [secrets.redact(r) or "" for r in record.forbidden_reads]
    for check in record.checks:
        check.reason = secrets.redact(check.reason)
        check.error = secrets.redact(check.error)
        check.details = secrets.redact_value(check.details)


def run_one_attempt(
    prepared: PreparedRun,
    task: Task,
    job: AttemptJob,
    controller: RunController,
    judge_engine: LazyEngine,
    patterns: Sequence[re.Pattern[str]],
    keeper: WorkdirKeeper | None = None,
    preparer: Preparer | None = None,
) -> FinishedAttempt:
    """Run ``job`` (attempt ``job.number``, 1-based, of ``task``); never raises for agent or
    judge trouble.

    With ``keeper`` (``--keep-workdirs``) the final working directory is archived. With
    ``preparer`` the attempt starts in the sandbox made ahead for it (when there is one that
    fits) and has the worker's next attempt made ahead while its agent runs."""
    report = FinishedAttempt(job=job, record=None)
    try:
        controller.check()
    except Stopped:
        return report
    started_at = _utc_now()
    ready = preparer.take(job.engine_key, task) if preparer is not None else None
    env = ready if ready is not None else AttemptEnvironment(prepared)
    sandbox = env.sandbox()
    try:
        try:
            with controller.busy():
                report.record, report.fatal = _agent_steps(
                    prepared,
                    task,
                    job,
                    env,
                    controller,
                    judge_engine,
                    patterns,
                    keeper,
                    preparer,
                )
        except Stopped:
            report.record = None
        except FatalJudgeError as exc:
            report.fatal = exc.error
            report.record = None
        finally:
            if task.cleanup:
                controller.wait_for_cleanup_turn()
                restore_workdir(sandbox)  # the agent or a check may have removed it
                budget = prepared.options.setup_timeout
                with controller.cleaning(task.name, budget):
                    shell = run_shell(
                        task.cleanup,
                        sandbox,
                        timeout=budget,
                        keep_on_stop=True,
                        spec_dir=prepared.spec.directory,
                    )
                failure = describe_shell_failure("cleanup", shell, prepared.options.setup_timeout)
                if failure and report.record is not None:
                    report.record.error = "; ".join(filter(None, [report.record.error, failure]))
    finally:
        env.cleanup()
    if report.record is not None:
        report.record.started_at = started_at
        _redact(report.record, prepared)
    return report


def _utc_now() -> str:
    """Now, as a UTC ISO time to the millisecond (an attempt's ``started_at``)."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
