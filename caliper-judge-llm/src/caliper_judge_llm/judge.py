"""The ``expect:`` judge: asks an LLM, through any installed backend, whether an attempt
met a natural-language expectation."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from caliper.attempt import AgentStatus, PromptRequest
from caliper.judge import Judge, JudgeContext, ValueProblem, Verdict
from caliper_judge_llm.prompt import PROMPT_VERSION, build_prompt
from caliper_judge_llm.verdict import parse_verdict

DEFAULT_CLAUDE_JUDGE_MODEL = "claude-sonnet-5"
"""Model the claude-code judge uses when ``--judge-model`` names none.

Pinned at execution time so a stale default in the user's Claude CLI does not decide how
attempts are graded. Override with ``--judge-model claude-code:<model>`` or the
``CALIPER_JUDGE_MODEL`` environment variable.
"""


def _suggestion(details: Mapping[str, Any]) -> str:
    """What to do when this judge engine cannot decide, naming the engine that failed."""
    model = details.get("judge_model")
    engine = f"{details['judge_backend']}{':' + model if model else ''}"
    return (
        "Pass --judge-model <backend[:model]> to grade with another engine "
        f"(this one was {engine})."
    )


def default_model_for(backend_id: str) -> str | None:
    """The model pinned for a judge engine given without a model (``None``: the CLI's own)."""
    override = os.environ.get("CALIPER_JUDGE_MODEL")
    if override:
        return override
    return DEFAULT_CLAUDE_JUDGE_MODEL if backend_id == "claude-code" else None


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
        engine = context.judge_engine()
        model = engine.model or default_model_for(engine.backend_id)
        details: dict[str, Any] = {
            "judge_backend": engine.backend_id,
            "judge_model": model,
            "prompt_version": PROMPT_VERSION,
        }
        prompt = build_prompt(
            task_prompt=context.task_prompt,
            expectation=str(context.value),
            turns=list(context.attempt.transcript),
            final_answer=context.attempt.final_answer,
        )
        timeout = context.timeout  # --judge-timeout, default the attempt's --timeout
        with context.make_sandbox() as sandbox:
            try:
                result = engine.backend.run_prompt(
                    PromptRequest(prompt=prompt, model=model, sandbox=sandbox, timeout=timeout)
                )
            except NotImplementedError as exc:
                return Verdict(None, error=f"{exc} {_suggestion(details)}", details=details)
        if result.model:
            details["judge_model"] = result.model
        if result.usage is not None:
            details["judge_usage"] = attrs.asdict(result.usage)
        suggestion = _suggestion(details)
        if result.status is not AgentStatus.COMPLETED:
            what = {AgentStatus.TIMEOUT: f"timed out after {timeout:g}s"}.get(
                result.status, result.error or result.status.value
            )
            if result.status is AgentStatus.TIMEOUT and result.error:
                what = f"{what}: {result.error}"
            return Verdict(
                None, error=f"The judge gave no verdict: {what}. {suggestion}", details=details
            )
        verdict = parse_verdict(result.text)
        if verdict is None:
            shown = (result.text or "").strip()[:300] or "(empty answer)"
            return Verdict(
                None,
                error=f"The judge's answer held no JSON verdict: {shown!r}. {suggestion}",
                details=details,
            )
        return Verdict(verdict.passed, reason=verdict.reasoning or None, details=details)
