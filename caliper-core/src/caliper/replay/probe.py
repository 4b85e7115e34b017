"""Checks that cannot fail: run each task's ``setup:`` and checks with no agent at all.

``caliper validate --probe`` uses this. For every task with an outcome check (``assert:``,
``expect:``, or a third-party outcome judge), a fresh attempt sandbox is made (the same
:mod:`caliper.plugin.sandbox` an attempt uses), the task's ``setup:`` runs in it, and then each
check is asked to judge an attempt in which the agent did nothing: an empty transcript and no final
answer. A check that *passes* there measures nothing, because a real attempt could pass it
without doing the task. ``activates:`` (and any other judge that does not score the outcome)
is exempt: whether a skill loaded is not decided by the working folder.

No agent CLI is ever started. LLM judges (``expect:``) run only when a judge engine is given
(``--judge-model``), since they cost tokens; without one they are reported as not probed.
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from caliper.errors import CaliperError
from caliper.plugin.attempt import AgentStatus, AttemptResult, AttemptSandbox
from caliper.plugin.judge import JudgeContext, Verdict
from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper.runner.attempt.judge_calls import judge_ask
from caliper.runner.attempt.sandbox import describe_shell_failure, run_shell
from caliper.spec.yamldoc import load_document
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.host.engine import Engine
    from caliper.plugin.judge import Judge
    from caliper.spec.model import Spec, Task

MEASURES_NOTHING = "passes without the agent doing anything: it measures nothing"


class ProbeStatus(str, enum.Enum):
    """What one check did when judged against an attempt where the agent did nothing."""

    MEASURES_NOTHING = "measures_nothing"
    """It passed: flagged, since a real attempt could pass it without doing the task."""
    CAN_FAIL = "can_fail"
    """It failed, as it should when nothing was done."""
    NO_VERDICT = "no_verdict"
    """The judge could not decide (an error); the check was not shown to be able to fail."""
    SETUP_FAILED = "setup_failed"
    """The task's ``setup:`` failed with no agent involved, so every attempt would too."""
    NOT_PROBED = "not_probed"
    """An LLM check with no ``--judge-model`` given (probing it would cost tokens)."""

    @property
    def flagged(self) -> bool:
        """Whether this status is a finding that makes the probe exit non-zero."""
        return self in (ProbeStatus.MEASURES_NOTHING, ProbeStatus.SETUP_FAILED)


@attrs_classes.frozen
class ProbeCheck:
    """The probe's finding on one check (``key``) of one task, at ``file:line`` of the spec."""

    task: str
    key: str
    status: ProbeStatus
    message: str
    file: Path
    line: int | None

    @property
    def where(self) -> str:
        """``file:line`` (just ``file`` when the line is unknown)."""
        return f"{self.file}:{self.line}" if self.line else str(self.file)

    def to_json(self) -> dict[str, object]:
        """Plain data for ``caliper validate --probe --format json``."""
        return {
            "task": self.task,
            "key": self.key,
            "status": self.status.value,
            "flagged": self.status.flagged,
            "message": self.message,
            "file": str(self.file),
            "line": self.line,
        }


def _key_lines(spec: Spec) -> Mapping[tuple[int, str], int]:
    """The spec line of every task key, as ``(task index, key) -> line`` (1-based)."""
    document, _ = load_document(spec.path)
    if document is None:
        return {}
    lines: dict[tuple[int, str], int] = {}
    for task in spec.tasks:
        for key in ("setup", *task.checks):
            position = document.position(("tasks", task.index, key), key=True)
            if position is not None:
                lines[(task.index, key)] = position[0]
    return lines


def _by_line(check: ProbeCheck) -> int:
    return check.line or 0


def _empty_attempt() -> AttemptResult:
    """An attempt in which the agent finished having done nothing at all."""
    return AttemptResult(status=AgentStatus.COMPLETED, final_answer="", transcript=())


def _judge(judge: Judge, context: JudgeContext) -> Verdict:
    try:
        return judge.check(context)
    except CaliperError as exc:
        return Verdict(passed=None, error=exc.render())
    except Exception as exc:  # a judge plugin bug is a finding, not a crash
        return Verdict(passed=None, error=f"{type(exc).__name__}: {exc}")


@attrs_classes.frozen
class Prober:
    """Probes the tasks of one spec (see the module docstring).

    ``judge_engine`` returns the ``--judge-model`` engine, or is ``None`` when none was given
    (then LLM checks are not probed). ``timeout`` bounds each check, ``setup_timeout`` each
    ``setup:``/``cleanup:`` command, as in ``caliper run``; ``declared_skills`` are the names
    of the spec's skills that could be read (what judges are told was declared);
    ``display_path`` is the spec's path as the user wrote it (default: its resolved path).
    """

    spec: Spec
    judges: Mapping[str, Judge]
    judge_engine: Callable[[], Engine] | None
    timeout: float
    setup_timeout: float
    declared_skills: tuple[str, ...] = ()
    display_path: Path | None = None

    def probed_keys(self, task: Task) -> list[str]:
        """The task's outcome checks (``activates:`` and other scoreboards are exempt)."""
        return [k for k in task.checks if k in self.judges and self.judges[k].scores_outcome]

    def probe(self) -> list[ProbeCheck]:
        """Probe every task; one :class:`ProbeCheck` per outcome check (or per failed setup)."""
        lines = _key_lines(self.spec)
        found: list[ProbeCheck] = []
        for task in self.spec.tasks:
            keys = self.probed_keys(task)
            if keys:
                found.extend(sorted(self._probe_task(task, keys, lines), key=_by_line))
        return found

    def _finding(
        self, task: Task, key: str, status: ProbeStatus, message: str, lines: Mapping
    ) -> ProbeCheck:
        line = lines.get((task.index, key), task.line)
        path = self.display_path or self.spec.path
        return ProbeCheck(task.name, key, status, message, path, line)

    def _probe_task(self, task: Task, keys: list[str], lines: Mapping) -> list[ProbeCheck]:
        local = [k for k in keys if not self.judges[k].uses_llm]
        llm = [k for k in keys if self.judges[k].uses_llm]
        found: list[ProbeCheck] = []
        if self.judge_engine is None:
            for key in llm:
                found.append(
                    self._finding(
                        task,
                        key,
                        ProbeStatus.NOT_PROBED,
                        f"{key}: not probed (an LLM judge; give --judge-model to probe it)",
                        lines,
                    )
                )
            llm = []
        if not local and not llm:
            return found
        sandbox = self._sandbox()
        try:
            if task.setup:
                shell = run_shell(
                    task.setup, sandbox, timeout=self.setup_timeout, spec_dir=self.spec.directory
                )
                failure = describe_shell_failure("setup", shell, self.setup_timeout)
                if failure:
                    message = f"{failure} (with no agent involved, so every attempt would too)"
                    return [
                        *found,
                        self._finding(task, "setup", ProbeStatus.SETUP_FAILED, message, lines),
                    ]
            for key in [*local, *llm]:
                verdict = _judge(self.judges[key], self._context(task, key, sandbox))
                found.append(self._classify(task, key, verdict, lines))
        finally:
            if task.cleanup:
                run_shell(
                    task.cleanup, sandbox, timeout=self.setup_timeout, spec_dir=self.spec.directory
                )
            remove_sandbox(sandbox)
        return found

    def _classify(self, task: Task, key: str, verdict: Verdict, lines: Mapping) -> ProbeCheck:
        if verdict.passed is True:
            status, message = ProbeStatus.MEASURES_NOTHING, f"this {key} {MEASURES_NOTHING}"
        elif verdict.passed is False:
            why = f": {verdict.reason}" if verdict.reason else ""
            status, message = ProbeStatus.CAN_FAIL, f"{key} fails without the agent{why}"
        else:
            status = ProbeStatus.NO_VERDICT
            message = f"{key} gave no verdict without the agent: {verdict.error or 'no reason'}"
        return self._finding(task, key, status, message, lines)

    def _sandbox(self, parent: AttemptSandbox | None = None) -> AttemptSandbox:
        return make_sandbox(
            spec_dir=self.spec.directory,
            extra_path=self.spec.sandbox.extra_path,
            parent=parent.root if parent else None,
            prefix="judge-" if parent else "caliper-probe-",
        )

    def _context(self, task: Task, key: str, sandbox: AttemptSandbox) -> JudgeContext:
        @contextlib.contextmanager
        def judge_sandbox() -> Iterator[AttemptSandbox]:
            nested = self._sandbox(parent=sandbox)
            try:
                yield nested
            finally:
                remove_sandbox(nested)

        def no_engine() -> Engine:
            raise CaliperError("no --judge-model was given, so LLM checks are not probed")

        return JudgeContext(
            task_name=task.name,
            task_prompt=task.prompt,
            value=task.checks[key],
            attempt=_empty_attempt(),
            workdir=sandbox.workdir,
            spec_dir=self.spec.directory,
            declared_skills=self.declared_skills,
            installed_skills=(),
            timeout=self.timeout,
            ask=judge_ask(self.judge_engine or no_engine, judge_sandbox, self.timeout),
            agent_env=dict(sandbox.base_env),
        )
