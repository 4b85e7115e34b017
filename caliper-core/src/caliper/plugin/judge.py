"""The judge contract: plugins that own one task key and check attempts with it.

A judge is handed a :class:`JudgeContext` (what the attempt did, where, and one way to put a
question to the judge model: :attr:`JudgeContext.ask`) and returns a :class:`Verdict`. This
module is the whole contract and imports nothing of the engine, the backends or the plugin
host, not even for type checking, so ``caliper.plugin.judge`` sits below all of them.

:class:`JudgeContext`, :class:`Verdict`, :class:`Reply`, :class:`JudgeUsage` and :class:`Ask`
are defined in :mod:`caliper.plugin.verdict` and imported from here on first use (``from
caliper.plugin.judge import Verdict`` works as always): ``caliper validate`` needs only
:class:`Judge` and :class:`ValueProblem`, and each attrs class costs about half a millisecond
to create.
"""

from __future__ import annotations

import abc
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.plugin.verdict import Ask, JudgeContext, JudgeUsage, Reply, Verdict

_IN_VERDICT = frozenset({"Ask", "JudgeContext", "JudgeUsage", "Reply", "Verdict"})


def __getattr__(name: str) -> Any:
    """The check-time types, from :mod:`caliper.plugin.verdict` (imported on first use)."""
    if name in _IN_VERDICT:
        import caliper.plugin.verdict

        return getattr(caliper.plugin.verdict, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "LLM_JUDGE_MARKER",
    "Ask",
    "Judge",
    "JudgeContext",
    "JudgeUsage",
    "Reply",
    "ValueProblem",
    "Verdict",
]


@attrs_classes.frozen
class ValueProblem:
    """One thing wrong with the value of a judge's task key, found by ``Judge.validate``.

    ``path`` is relative to the key's value (``()`` for the value itself, ``(1,)`` for its second
    item) so the spec loader can point at the exact line and column.
    """

    message: str
    path: tuple[str | int, ...] = ()


class Judge(abc.ABC):
    """Owns one task key (``assert``, ``expect``, ``activates``, …) and checks attempts with it.

    ``key`` is the task key (also the entry-point name in ``caliper.judges``). When
    ``scores_outcome`` is false the verdict does not decide pass/fail. ``uses_llm`` marks
    judges that call :attr:`JudgeContext.ask` (they run after the local checks, and not at all
    once one has failed). ``scores_activation`` declares the judge that decides which skills
    the agent should have loaded: its verdict is the attempt's activation result (the
    activation scoreboard, never pass/fail) and :meth:`expected_skills` tells the per-skill
    scoreboard which skills a task expects; the built-in ``activates`` judge declares it.
    ``reads_workdir`` says whether a local judge (not ``uses_llm``) looks at the attempt's
    working directory: ``caliper regrade`` needs a kept working directory only for those.
    """

    key: str
    summary: str = ""
    scores_outcome: bool = True
    uses_llm: bool = False
    scores_activation: bool = False
    reads_workdir: bool = True

    def expected_skills(self, value: Any) -> tuple[str, ...]:
        """The skills a task with this (validated) value expects the agent to load.

        Only asked of a judge with ``scores_activation``. Default: the value is a list of
        skill names (as ``activates: [a, b]`` is).
        """
        return tuple(str(name) for name in value or ())

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
