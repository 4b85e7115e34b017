"""The ``activates`` judge: did the agent load exactly the skills the task names?

``activates: [a, b]`` passes when the set of skills the agent loaded equals ``{a, b}``;
``activates: []`` passes when nothing loaded. A skill the spec does not declare that the agent
loaded anyway (a ``SKILL.md`` nested in a declared skill, a user skill under
``--user-customizations``) is a load like any other: it fails an exact set that lacks it.
Skills shipped inside the agent CLI (``built_in``) are seen, never scored. Skills removed
for the run with ``--ablate`` are taken out of the expected set (they cannot load), so under
ablation the task asks whether the agent stayed away from the remaining neighbours. Its
verdict feeds the activation scoreboard, never the success rate.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import caliper
from caliper.plugin.judge import Judge, ValueProblem
from caliper.spec.fields import did_you_mean, type_name

if TYPE_CHECKING:
    from caliper.plugin.verdict import JudgeContext, Verdict


def _names(names: Any) -> str:
    items = sorted(names)
    return "[" + ", ".join(items) + "]" if items else "nothing"


class ActivationJudge(Judge):
    """Compares the skills an attempt loaded with the task's ``activates:`` list, as sets."""

    key = "activates"
    summary = "which skills the agent chose to load (exact set; [] means none)"
    scores_outcome = False
    uses_llm = False
    scores_activation = True

    def validate(
        self, value: Any, *, spec_dir: Path, declared_skills: tuple[str, ...]
    ) -> list[ValueProblem]:
        if isinstance(value, str):
            return [ValueProblem(f"expected a list of skill names; write [{value}]")]
        if not isinstance(value, list):
            return [
                ValueProblem(
                    "expected a list of skill names ([] means no skill should load), found "
                    f"{type_name(value)}"
                )
            ]
        problems = []
        seen: set[str] = set()
        declared = ", ".join(declared_skills) or "none: the spec has no `skills:`"
        for index, item in enumerate(value):
            if not isinstance(item, str):
                problems.append(
                    ValueProblem(f"expected a skill name, found {type_name(item)}", (index,))
                )
            elif item in seen:
                problems.append(ValueProblem(f"{item!r} is listed twice", (index,)))
            elif item not in declared_skills:
                problems.append(
                    ValueProblem(
                        f"{item!r} is not a declared skill.{did_you_mean(item, declared_skills)}"
                        f" Declared skills (frontmatter names): {declared}.",
                        (index,),
                    )
                )
            if isinstance(item, str):
                seen.add(item)
        return problems

    def check(self, context: JudgeContext) -> Verdict:
        from caliper.plugin.verdict import Verdict  # here: `caliper validate` never runs a check

        activated = context.attempt.activated
        if activated is None:
            return Verdict(passed=None, error="activation not observable")
        installed = set(context.installed_skills)
        wanted = set(context.value or ())
        expected = wanted & installed
        ablated = wanted - installed
        undeclared = set(context.attempt.undeclared or ()) - set(activated)
        got = set(activated) | undeclared
        details = {
            "expected": sorted(expected),
            "activated": list(activated),
            "ablated": sorted(ablated),
        }
        if undeclared:
            details["undeclared"] = sorted(undeclared)
        reason = f"expected {_names(expected)}, activated {_names(got)}"
        if got - expected:
            reason += f"; unexpected: {_names(got - expected)}"
        if undeclared:
            reason += f" ({_names(undeclared)} not declared in the spec)"
        if expected - got:
            reason += f"; missing: {_names(expected - got)}"
        if ablated:
            reason += f" ({_names(ablated)} ablated for this run)"
        return Verdict(passed=got == expected, reason=reason, details=details)


@caliper.hookimpl
def register_judges(register: Any) -> None:
    """Register the built-in ``activates`` judge."""
    register(ActivationJudge())
