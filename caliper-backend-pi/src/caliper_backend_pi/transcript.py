"""Turning pi's finished messages into caliper's transcript turns."""

from __future__ import annotations

from caliper.plugin.attempt import Turn
from caliper_backend_pi.events import PiRun, content_blocks, message_text


def build_transcript(run: PiRun) -> list[Turn]:
    """User text, assistant text and tool calls (with results), in the order pi produced them.

    pi 1.x's leading ``system`` message and the model's thinking blocks are left out; tool
    results are attached to the call that asked for them rather than repeated as turns.
    """
    turns: list[Turn] = []
    calls = {call.id: call for call in run.tool_calls()}
    for message in run.messages:
        role = message.get("role")
        if role == "user":
            text = message_text(message)
            if text:
                turns.append(Turn(role="user", content=text))
        elif role == "assistant":
            for block in content_blocks(message):
                kind = block.get("type")
                if kind == "text" and block.get("text"):
                    turns.append(Turn(role="assistant", content=str(block["text"])))
                elif kind == "toolCall":
                    call = calls.get(str(block.get("id") or ""))
                    turns.append(
                        Turn(
                            role="tool",
                            tool_name=str(block.get("name") or ""),
                            tool_input=block.get("arguments"),
                            tool_output=call.output if call else None,
                            is_error=call.is_error if call else None,
                        )
                    )
    return turns


def final_answer(run: PiRun) -> str | None:
    """The text of the last assistant message, or ``None`` when it has none."""
    last = run.last_assistant
    if last is None:
        return None
    text = message_text(last).strip()
    return text or None
