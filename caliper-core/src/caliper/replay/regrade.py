"""Re-running the judges of a saved run on its saved attempts (``caliper regrade``).

No agent runs. Each attempt the judges saw in the parent run (one that completed: ``pass``,
``task_fail``, ``judge_error``, ``not_checked``) is judged again with the spec's *current*
checks: ``expect:`` and ``activates:`` from the saved transcript and final answer (as the
results file kept them), ``assert:`` and other local checks against a copy of the attempt's
final working directory unpacked from its ``--keep-workdirs`` archive (with
:func:`caliper.spec.safetar.extract`). Attempts the judges never saw (``infra_error``,
``timeout``, a failed setup) and ``cheat`` attempts are copied unchanged.

The result is a new run: ``parent_run`` names the parent, ``derived_by`` is ``regrade`` and
``changes`` says what differs (the judge model, the spec's hash).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tarfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from caliper.errors import UsageError
from caliper.plugin.attempt import AgentStatus, AttemptResult, AttemptSandbox
from caliper.plugin.judge import JudgeContext
from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper.results.models import AttemptRecord, Outcome
from caliper.runner.attempt.judge_calls import judge_ask
from caliper.runner.attempt.judging import judge_attempt
from caliper.spec.safetar import ArchiveTooBig, extract
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.plugin.judge import Judge
    from caliper.plugin.mcp import SecretSet
    from caliper.plugin.tools import ToolNames
    from caliper.runner.attempt.judging import LazyEngine
    from caliper.spec.model import Spec, Task

JUDGED = (Outcome.PASS, Outcome.TASK_FAIL, Outcome.JUDGE_ERROR, Outcome.NOT_CHECKED)


@attrs_classes.frozen
class Regrader:
    """What judging a saved attempt again needs: the current spec, its judges, the judge
    engine, the secrets to redact, where the parent's files are and the judge time budget."""

    spec: Spec
    judges: dict[str, Judge]
    judge_engine: LazyEngine
    secrets: SecretSet
    results_folder: Path
    timeout: float
    declared: tuple[str, ...]
    installed: tuple[str, ...]
    tools: ToolNames | None = None
    """The run's backend's tool vocabulary, for ``tools:`` checks (``None``: not installed)."""

    def needs_workdir(self, task: Task) -> bool:
        """True when a check of ``task`` runs local code against the working directory (a
        judge that scores the outcome, uses no LLM and ``reads_workdir``)."""
        return any(
            key in self.judges
            and self.judges[key].scores_outcome
            and not self.judges[key].uses_llm
            and self.judges[key].reads_workdir
            for key in task.checks
        )

    def missing_workdirs(self, attempts: list[tuple[Task, dict[str, Any]]]) -> list[str]:
        """``task #n`` of every attempt to regrade whose local checks lack a kept workdir."""
        missing = []
        for task, data in attempts:
            if not self.needs_workdir(task):
                continue
            archive = data.get("workdir_archive")
            if not archive or not (self.results_folder / archive).is_file():
                missing.append(f"{task.name} #{data.get('attempt')}")
        return missing

    def regrade(self, task: Task, record: AttemptRecord) -> AttemptRecord:
        """``record`` judged again (a copy; its tries and observations kept)."""
        result = AttemptResult(
            status=AgentStatus.COMPLETED,
            final_answer=record.final_answer,
            transcript=tuple(record.transcript or ()),
            activated=record.activated,
            undeclared=record.undeclared,
            usage=record.usage,
            model=record.model,
        )
        sandbox = make_sandbox(
            spec_dir=self.spec.directory,
            extra_path=self.spec.sandbox.extra_path,
            prefix="caliper-regrade-",
        )
        try:
            if record.workdir_archive and self.needs_workdir(task):
                self._unpack(self.results_folder / record.workdir_archive, sandbox.workdir)
            judgement = judge_attempt(
                task, self.judges, self._contexts(task, result, sandbox), llm_allowed=True
            )
        finally:
            remove_sandbox(sandbox)
        new = attrs.evolve(
            record,
            checks=judgement.checks,
            activation_passed=judgement.activation_passed,
            outcome=judgement.outcome,
            reason=judgement.reason,
        )
        _redact_checks(new, self.secrets)
        return new

    @staticmethod
    def _unpack(archive: Path, workdir: Path) -> None:
        try:
            extract(archive, workdir)
        except ArchiveTooBig as exc:
            raise UsageError(
                f"Refusing to unpack the kept working directory: {exc}.",
                hint="Raise the limit (0 turns it off) if the archive is trusted and this big.",
            ) from None
        except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
            # a cut archive ends the gzip stream early (EOFError): a damaged file, not a stop
            raise UsageError(
                f"Cannot unpack the kept working directory {archive}: "
                f"{exc or 'the archive ends early (it is cut short)'}.",
                hint="The archive is damaged or was changed; re-run the attempt instead.",
            ) from None

    def _contexts(self, task: Task, result: AttemptResult, sandbox: AttemptSandbox):
        @contextlib.contextmanager
        def judge_sandbox() -> Iterator[AttemptSandbox]:
            box = make_sandbox(spec_dir=self.spec.directory, parent=sandbox.root, prefix="judge-")
            try:
                yield box
            finally:
                remove_sandbox(box)

        ask = judge_ask(self.judge_engine, judge_sandbox, self.timeout)

        def make(key: str) -> JudgeContext:
            return JudgeContext(
                task_name=task.name,
                task_prompt=task.prompt,
                value=task.checks[key],
                attempt=result,
                workdir=sandbox.workdir,
                spec_dir=self.spec.directory,
                declared_skills=self.declared,
                installed_skills=self.installed,
                timeout=self.timeout,
                ask=ask,
                agent_env=dict(sandbox.base_env),
                tools=self.tools,
            )

        return make


def _redact_checks(record: AttemptRecord, secrets: SecretSet) -> None:
    if not secrets.values:
        return
    record.reason = secrets.redact(record.reason)
    for check in record.checks:
        check.reason = secrets.redact(check.reason)
        check.error = secrets.redact(check.error)
        check.details = secrets.redact_value(check.details)


def spec_file_hash(path: Path) -> str:
    """SHA-256 of the spec file's bytes now."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def environ() -> dict[str, str]:
    """The caller's environment (for ``${VAR}`` in ``mcp:``, resolved only for redaction)."""
    return dict(os.environ)
