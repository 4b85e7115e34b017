"""The versioned judge prompt and the transcript rendering it embeds."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from caliper.plugin.judge import LLM_JUDGE_MARKER

if TYPE_CHECKING:
    from caliper.plugin.attempt import Turn

PROMPT_VERSION = "expect-v1"
"""Bumped whenever the wording or the verdict format changes; saved with every run."""

TOOL_FIELD_LIMIT = 4_000
TRANSCRIPT_LIMIT = 120_000


def truncate(text: str, limit: int) -> str:
    """Cut ``text`` to ``limit`` characters, saying how much was dropped (never silently)."""
    if len(text) <= limit:
        return text
    keep = max(limit - 80, 0)
    head, tail = text[: keep // 2], text[len(text) - keep // 2 :]
    return f"{head}\n[… {len(text) - len(head) - len(tail)} characters truncated …]\n{tail}"


def _as_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return str(value)


def render_transcript(turns: Sequence[Turn]) -> str:
    """The attempt's transcript as plain text: assistant text, tool calls, tool results."""
    blocks: list[str] = []
    for number, turn in enumerate(turns, 1):
        if turn.role == "tool" or turn.tool_name:
            block = f"[{number}] TOOL CALL {turn.tool_name or '?'}\n"
            block += "input: " + truncate(_as_text(turn.tool_input), TOOL_FIELD_LIMIT)
            if turn.tool_output is not None:
                label = "error" if turn.is_error else "result"
                block += f"\n{label}: " + truncate(turn.tool_output, TOOL_FIELD_LIMIT)
        else:
            block = f"[{number}] {turn.role.upper()}\n" + truncate(
                turn.content or "", TOOL_FIELD_LIMIT * 2
            )
        blocks.append(block)
    text = "\n\n".join(blocks)
    return truncate(text, TRANSCRIPT_LIMIT)


def build_prompt(
    *, task_prompt: str, expectation: str, turns: Sequence[Turn], final_answer: str | None
) -> str:
    """The full judge prompt for one attempt."""
    transcript = render_transcript(turns) if turns else "(no transcript was captured)"
    answer = truncate(final_answer, TOOL_FIELD_LIMIT * 4) if final_answer else "(none)"
    return f"""{LLM_JUDGE_MARKER} prompt-version={PROMPT_VERSION}
You are grading one attempt of a coding agent at a task. Decide only whether the attempt
meets the EXPECTATION below, using the evidence in the transcript (tool calls and their
results count as evidence; claims the agent makes without evidence do not). Do not use any
tools and do not try to do the task yourself.

<task_prompt>
{task_prompt}
</task_prompt>

<expectation>
{expectation}
</expectation>

<transcript>
{transcript}
</transcript>

<final_answer>
{answer}
</final_answer>

Reply with one JSON object and nothing else:
{{"passed": true or false, "reasoning": "one or two sentences citing the evidence"}}
"""
