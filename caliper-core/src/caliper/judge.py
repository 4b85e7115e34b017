"""Base class and data for judges: plugins that own one task key and check attempts with it."""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from caliper.attempt import AttemptResult, AttemptSandbox
    from caliper.engine import Engine


@attrs.frozen
class Verdict:
    """A judge's decision on one attempt.

    ``passed`` is ``True``/``False`` for a decision and ``None`` when the judge could not
    decide (then ``error`` says why and the attempt is scored ``judge_error``). ``reason`` is
    shown to the user for failures; ``details`` lands in the saved results (e.g. judge model).
    """

    passed: bool | None
    reason: str | None = None
    error: str | None = None
    details: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class ValueProblem:
    """One thing wrong with the value of a judge's task key, found by ``Judge.validate``.

    ``path`` is relative to the key's value (``()`` for the value itself, ``(1,)`` for its second
    item) so the spec loader can point at the exact line and column.
    """

    message: str
    path: tuple[str | int, ...] = ()


@attrs.frozen
class JudgeContext:
    """What a judge may look at when checking one attempt.

    ``value`` is the (validated) value of the judge's key in the task; ``attempt`` is what the
    backend observed; ``workdir`` the attempt's working directory (still present); ``spec_dir``
    the folder of the spec file; ``judge_engine`` returns the resolved ``--judge-model`` engine
    (resolved lazily so runs without LLM judges never load a judge backend); ``make_sandbox``
    returns a context manager yielding a fresh ``AttemptSandbox`` (its own isolated home,
    deleted on exit) for judges that run an agent CLI; ``agent_env`` is the environment the
    agent ran with (its isolated HOME, PATH with the spec's ``extra_path``), for judges that
    run local code against what the agent left behind; ``timeout`` the seconds one check may
    take (``--judge-timeout``, default the attempt's ``--timeout``).
    """

    task_name: str
    task_prompt: str
    value: Any
    attempt: AttemptResult
    workdir: Path
    spec_dir: Path
    declared_skills: tuple[str, ...]
    installed_skills: tuple[str, ...]
    timeout: float
    judge_engine: Callable[[], Engine]
    make_sandbox: Callable[[], AbstractContextManager[AttemptSandbox]]
    agent_env: Mapping[str, str] = attrs.field(factory=dict)


class Judge(abc.ABC):
    """Owns one task key (``assert``, ``expect``, ``activates``, …) and checks attempts.

    ``key`` is the task key (also the entry-point name in ``caliper.judges``). When
    ``scores_outcome`` is false the verdict feeds a separate scoreboard (as activation does)
    instead of pass/fail. ``uses_llm`` marks judges that need ``--judge-model``.
    """

    key: str
    summary: str = ""
    scores_outcome: bool = True
    uses_llm: bool = False

    def validate(
        self, value: Any, *, spec_dir: Path, declared_skills: tuple[str, ...]
    ) -> list[ValueProblem]:
        """Problems with this key's value in a task, without running anything. Default: none."""
        return []

    @abc.abstractmethod
    def check(self, context: JudgeContext) -> Verdict:
        """Decide whether the attempt satisfied this key's value."""


LLM_JUDGE_MARKER = "[caliper-judge-request]"
"""Text every LLM-judge prompt contains, so scripted model servers can recognise judge calls."""
