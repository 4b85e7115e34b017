"""The ``expect:`` judge: asks an LLM, through any installed backend, whether an attempt
met a natural-language expectation.

The prompt and verdict modules (and :mod:`caliper.plugin.verdict`'s types) are imported when a check
runs, not with the judge, so ``caliper validate`` (which only asks
:meth:`ExpectJudge.validate`) does not pay for them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from caliper.plugin.judge import Judge, ValueProblem

if TYPE_CHECKING:
    from caliper.plugin.verdict import JudgeContext, Reply, Verdict


def _suggestion(reply: Reply) -> str:
    """What to do when this judge engine cannot decide, naming the engine that failed."""
    engine = f"{reply.backend}{':' + reply.model if reply.model else ''}"
    return (
        "Pass --judge-model <backend[:model]> to grade with another engine "
        f"(this one was {engine})."
    )


def _no_answer(reply: Reply, timeout: float) -> str:
    """Why ``reply`` holds no answer, in the words of the CLI when it said something."""
    if not reply.timed_out:
        return (reply.error or "no answer").rstrip(".")
    what = f"timed out after {timeout:g}s"
    return f"{what}: {reply.error}" if reply.error else what


class ExpectJudge(Judge):
    """Owns ``expect:``: an LLM reads the transcript and decides pass or fail."""

    key = "expect"
    summary = "An LLM judge reads the transcript and decides whether the expectation was met."
    uses_llm = True

    def validate(
        self, value: Any, *, spec_dir: Path, declared_skills: tuple[str, ...]
    ) -> list[ValueProblem]:
        if not isinstance(value, str) or not value.strip():
            return [ValueProblem("expected a non-empty string describing what success looks like")]
        return []

    def check(self, context: JudgeContext) -> Verdict:
        from caliper.plugin.verdict import Verdict
        from caliper_judge_llm.prompt import PROMPT_VERSION, build_prompt
        from caliper_judge_llm.verdict import parse_verdict

        prompt = build_prompt(
            task_prompt=context.task_prompt,
            expectation=str(context.value),
            turns=list(context.transcript),
            final_answer=context.final_answer,
        )
        reply = context.ask(prompt)  # --judge-timeout, default the attempt's --timeout
        suggestion = _suggestion(reply)
        if not reply.answered:
            what = _no_answer(reply, context.timeout)
            return Verdict.from_reply(
                reply,
                None,
                error=f"The judge gave no verdict: {what}. {suggestion}",
                prompt_version=PROMPT_VERSION,
            )
        verdict = parse_verdict(reply.text)
        if verdict is None:
            shown = (reply.text or "").strip()[:300] or "(empty answer)"
            return Verdict.from_reply(
                reply,
                None,
                error=f"The judge's answer held no JSON verdict: {shown!r}. {suggestion}",
                prompt_version=PROMPT_VERSION,
            )
        return Verdict.from_reply(
            reply,
            verdict.passed,
            reason=verdict.reasoning or None,
            prompt_version=PROMPT_VERSION,
        )
