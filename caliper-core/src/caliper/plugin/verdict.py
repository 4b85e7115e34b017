"""What a judge's check works with: the :class:`JudgeContext` it is handed, the :class:`Verdict`
it returns, and for a judge that asks a model, the :class:`Reply` and its :class:`JudgeUsage`.

Plugins import these from :mod:`caliper.plugin.judge` (the whole contract); they live here so that
``caliper validate``, which only checks task keys, does not create them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from caliper.plugin.attempt import Usage
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.plugin.attempt import AttemptResult, Turn
    from caliper.plugin.tools import ToolNames


JudgeUsage = Usage
"""What one judge decision cost: :class:`caliper.plugin.attempt.Usage` itself (tokens split four
ways that never overlap, and ``cost_usd`` when the judge model's provider reported it)."""


@attrs_classes.frozen
class Reply:
    """The judge model's answer to one :meth:`JudgeContext.ask`.

    ``backend`` and ``model`` name the engine that answered (``model`` is the concrete model
    when the CLI reported it, else the one asked for, ``None`` for the CLI's own default);
    ``usage`` is what the call spent, ``duration_seconds`` how long it took. When there is no
    answer, ``text`` is ``None`` and ``timed_out`` or ``error`` (what the CLI reported: an
    authentication refusal, a rate limit, a backend that cannot judge) says why.
    """

    text: str | None
    backend: str
    model: str | None = None
    usage: JudgeUsage | None = None
    duration_seconds: float | None = None
    error: str | None = None
    timed_out: bool = False

    @property
    def answered(self) -> bool:
        """Whether the model gave an answer (which may still hold no usable verdict)."""
        return not self.timed_out and self.error is None


class Ask(Protocol):
    """``context.ask(prompt, timeout=None) -> Reply``: one question to the judge model.

    The core runs it through the judge engine's backend (``--judge-model``, resolved on the
    first call only), isolated like an attempt: a fresh home removed afterwards, no skills, no
    user config, as few tools as the backend allows. ``timeout`` is at most, and by default,
    the check's budget (:attr:`JudgeContext.timeout`). Raises
    :class:`caliper.errors.CaliperError` when there is no judge engine to ask.
    """

    def __call__(self, prompt: str, *, timeout: float | None = None) -> Reply:
        """Ask the judge model ``prompt``; its answer, or why there is none."""
        ...


@attrs_classes.frozen
class Verdict:
    """A judge's decision on one attempt.

    ``passed`` is ``True``/``False`` for a decision and ``None`` when the judge could not
    decide (then ``error`` says why and the attempt is scored ``judge_error``). ``reason`` is
    shown to the user for failures; ``details`` is the judge's own data, saved as it is.

    A judge that asked a model fills the typed fields every report reads: ``usage`` (its
    spend, kept apart from the skill's tokens), ``backend`` and ``model`` (the engine that
    answered) and ``prompt_version`` (the version of its prompt, so differently graded runs
    can be told apart). :meth:`from_reply` copies them from a :class:`Reply`.
    """

    passed: bool | None
    reason: str | None = None
    error: str | None = None
    details: Mapping[str, Any] = attrs.field(factory=dict)
    usage: JudgeUsage | None = None
    backend: str | None = None
    model: str | None = None
    prompt_version: str | None = None

    @classmethod
    def from_reply(
        cls,
        reply: Reply,
        passed: bool | None,
        *,
        reason: str | None = None,
        error: str | None = None,
        prompt_version: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> Verdict:
        """A verdict reached from ``reply``, carrying its usage, backend and model."""
        return cls(
            passed,
            reason=reason,
            error=error,
            details=dict(details or {}),
            usage=reply.usage,
            backend=reply.backend,
            model=reply.model,
            prompt_version=prompt_version,
        )


@attrs_classes.frozen
class JudgeContext:
    """What a judge may look at when checking one attempt.

    ``value`` is the (validated) value of the judge's key in the task; ``attempt`` is what the
    backend observed (also as :attr:`transcript` and :attr:`final_answer`); ``workdir`` the
    attempt's working directory (still present); ``spec_dir`` the folder of the spec file;
    ``installed_skills`` the skills installed for the attempt (``--ablate`` removes some of
    ``declared_skills``); ``timeout`` the seconds one check may take (``--judge-timeout``,
    default the attempt's ``--timeout``); ``ask`` puts one question to the judge model (see
    :class:`Ask`; the engine is resolved on the first call only, so runs without LLM judges
    never load a judge backend); ``agent_env`` is the environment the agent ran with (its
    isolated HOME, PATH with the spec's ``extra_path``), for judges that run local code
    against what the agent left behind; ``tools`` is the backend's tool vocabulary
    (:class:`caliper.plugin.tools.ToolNames`), ``None`` when no backend ran (``validate
    --probe``).
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
    ask: Ask
    agent_env: Mapping[str, str] = attrs.field(factory=dict)
    tools: ToolNames | None = None

    @property
    def transcript(self) -> Sequence[Turn]:
        """The attempt's turns in order: agent text, tool calls with inputs and results."""
        return self.attempt.transcript

    @property
    def final_answer(self) -> str | None:
        """The agent's final answer (``None`` when it gave none)."""
        return self.attempt.final_answer
