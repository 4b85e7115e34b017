"""The ``tools`` judge: deterministic checks on the tool calls of an attempt's transcript.

``tools: [{called: shell, input: '^git commit'}, {not_called: write}]`` passes when every
check holds (see :mod:`caliper.default_plugins.tools_spec` for the form). Tools are named in
one vocabulary, mapped by the backend that ran the attempt
(:meth:`caliper.plugin.backend.Backend.tool_vocabulary`). Planted ``history:`` turns are not
in the attempt's transcript, so they are never counted. A failing check names the call that
broke it (call number, transcript turn, tool, input excerpt).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import caliper
from caliper.plugin.judge import Judge, ValueProblem

if TYPE_CHECKING:
    from caliper.default_plugins.tools_spec import Check, Selector, Step
    from caliper.plugin.judge import JudgeContext, Verdict
    from caliper.plugin.tools import ToolCall, ToolNames


class Undecidable(Exception):
    """A check that cannot be decided on this backend (it has no tool of the named kind)."""


def _matches_selector(selector: Selector, call: ToolCall, names: ToolNames | None) -> bool:
    if selector.kind is not None:
        if names is None:
            raise Undecidable(f"no backend tool vocabulary to decide {selector.written!r}")
        if selector.kind not in names.vocabulary:
            raise Undecidable(
                f"the {names.backend} backend has no {selector.kind} tool, so "
                f"{selector.written!r} cannot be checked on it (see its docs page)"
            )
        return call.kind == selector.kind
    if selector.mcp is not None:
        server, tool = selector.mcp
        if names is None:
            prefix = f"mcp__{server}__"
            return call.tool == prefix + tool or (tool == "*" and call.tool.startswith(prefix))
        if tool == "*":
            marker = "\x00"
            prefix = names.mcp_name(server, marker).split(marker)[0]
            return call.tool.startswith(prefix)
        return call.tool == names.mcp_name(server, tool)
    if selector.pattern is not None:
        return selector.pattern.search(call.tool) is not None
    return call.tool == selector.name


def matches(step: Step, call: ToolCall, names: ToolNames | None) -> bool:
    """Whether ``call`` is one ``step`` is about (tool, then ``input`` pattern)."""
    if not _matches_selector(step.selector, call, names):
        return False
    return step.input is None or step.input.search(call.text) is not None


def describe_call(call: ToolCall) -> str:
    """``call 3 (turn 5): Bash `git push``` — a call as failure messages name it."""
    return f"call {call.number} (turn {call.turn}): {call.tool} `{call.excerpt()}`"


def _times(count: int) -> str:
    return "once" if count == 1 else f"{count} times"


def _counted(check: Check, calls: Sequence[ToolCall], names: ToolNames | None) -> str | None:
    step = check.steps[0]
    hits = [call for call in calls if matches(step, call, names)]
    what = step.describe()
    if check.mode == "not_called":
        return f"{what} was called: {describe_call(hits[0])}" if hits else None
    if len(hits) < check.at_least:
        found = f"called {_times(len(hits))}" if hits else "never called"
        need = "" if check.at_least == 1 else f" (at least {check.at_least} wanted)"
        return f"{what} was {found}{need}" + (f"; {len(calls)} tool calls in all" if calls else "")
    if check.at_most is not None and len(hits) > check.at_most:
        extra = hits[check.at_most]
        return (
            f"{what} was called {len(hits)} times (at most {check.at_most} wanted); "
            f"the first call over: {describe_call(extra)}"
        )
    return None


def _ordered(check: Check, calls: Sequence[ToolCall], names: ToolNames | None) -> str | None:
    position = 0
    last: ToolCall | None = None
    for step in check.steps:
        found = next(
            (c for c in calls[position:] if matches(step, c, names)),
            None,
        )
        if found is None:
            earlier = next((c for c in calls[:position] if matches(step, c, names)), None)
            after = f" after {describe_call(last)}" if last else ""
            if earlier is not None:
                return f"{step.describe()} was not called{after}; only before: " + describe_call(
                    earlier
                )
            return f"{step.describe()} was never called{after}"
        last = found
        position = calls.index(found) + 1
    return None


def failure(check: Check, calls: Sequence[ToolCall], names: ToolNames | None) -> str | None:
    """Why ``check`` fails on ``calls``, or ``None`` when it holds. Raises
    :class:`Undecidable` when the backend has no tool of a kind the check names (and there
    are calls to decide on)."""
    if check.mode == "order":
        return _ordered(check, calls, names)
    return _counted(check, calls, names)


def _decidable(check: Check, names: ToolNames | None) -> None:
    """Raise :class:`Undecidable` when the backend lacks a tool kind ``check`` names."""
    if names is None:
        return
    for step in check.steps:
        kind = step.selector.kind
        if kind is not None and kind not in names.vocabulary:
            raise Undecidable(
                f"the {names.backend} backend has no {kind} tool, so "
                f"{step.selector.written!r} cannot be checked on it (see its docs page)"
            )


class ToolsJudge(Judge):
    """Checks which tools the agent called, how often, in which order and with what input."""

    key = "tools"
    summary = "which tools the agent called: called / not_called / order, counts, input patterns"
    uses_llm = False
    reads_workdir = False  # the transcript only

    def validate(
        self, value: Any, *, spec_dir: Path, declared_skills: tuple[str, ...]
    ) -> list[ValueProblem]:
        from caliper.default_plugins.tools_spec import parse

        return parse(value)[1]

    def check(self, context: JudgeContext) -> Verdict:
        from caliper.default_plugins.tools_spec import parse
        from caliper.plugin.tools import tool_calls
        from caliper.plugin.verdict import Verdict  # here: `caliper validate` never runs a check

        checks, problems = parse(context.value)
        if problems:
            return Verdict(passed=None, error=problems[0].message)
        names = context.tools
        calls = tool_calls(context.transcript, names)
        reasons = []
        try:
            for check in checks:
                _decidable(check, names)
                reason = failure(check, calls, names)
                if reason is not None:
                    reasons.append(reason)
        except Undecidable as exc:
            return Verdict(passed=None, error=str(exc))
        details = {
            "calls": [{"turn": c.turn, "tool": c.tool, "kind": c.kind} for c in calls],
            "failed": reasons,
        }
        if reasons:
            return Verdict(passed=False, reason="; ".join(reasons), details=details)
        return Verdict(passed=True, reason=f"all {len(checks)} tools: checks hold", details=details)


@caliper.hookimpl
def register_judges(register: Any) -> None:
    """Register the built-in ``tools`` judge."""
    register(ToolsJudge())
