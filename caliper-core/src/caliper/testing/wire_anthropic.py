"""Anthropic Messages API (``POST /v1/messages``): request view, replies, errors."""

from __future__ import annotations

from typing import Any

from caliper.testing.conversation import Conversation, ConversationParts, as_json_text, text_of
from caliper.testing.reply import Reply
from caliper.testing.script import ScriptedError
from caliper.testing.sse import event
from caliper.testing.wire_protocol import bare_path, body_model, body_stream

name = "anthropic"
API = name
CALL_ID_PREFIX = "toolu_"

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "api_error",
    502: "api_error",
    503: "api_error",
    529: "overloaded_error",
}


def matches(path: str) -> bool:
    """Whether a POST to ``path`` is a Messages request (``…/messages``, any query string)."""
    return bare_path(path).endswith("/messages")


def model_from(path: str, body: dict[str, Any]) -> str | None:
    """The model a request asks for: the body's ``model``."""
    return body_model(body)


def stream_from(path: str, body: dict[str, Any]) -> bool:
    """Whether a request asks for SSE: the body's ``stream`` flag."""
    return body_stream(body)


def parse(body: dict[str, Any]) -> Conversation:
    """The conversation in a Messages request (``role: system`` entries in ``messages`` too)."""
    parts = ConversationParts(system=[text_of(body.get("system"))] if body.get("system") else [])
    system, users, assistants = parts.system, parts.users, parts.assistants
    results, calls, ids = parts.results, parts.calls, parts.ids
    for msg in body.get("messages") or ():
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if role == "assistant":
            parts.assistant_count += 1
        for block in blocks:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "tool_result":
                results.append(text_of(block.get("content")))
                ids.append(str(block.get("tool_use_id", "")))
            elif kind == "tool_use":
                calls.append(f"{block.get('name')} {as_json_text(block.get('input'))}")
                ids.append(str(block.get("id", "")))
            elif kind in ("text", None):
                text = text_of(block.get("text"))
                {"system": system, "assistant": assistants}.get(role, users).append(text)
    return parts.build(API, body)


def _usage(reply: Reply, output: int) -> dict[str, int]:
    return {
        "input_tokens": reply.usage.input,
        "output_tokens": output,
        "cache_creation_input_tokens": reply.usage.cache_creation,
        "cache_read_input_tokens": reply.usage.cache_read,
    }


def _stop_reason(reply: Reply) -> str:
    return "tool_use" if reply.tool_calls else "end_turn"


def _content(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for call in reply.tool_calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": call.id,
                "name": call.flat_name,
                "input": call.arguments_object(),
            }
        )
    return blocks


def reply_json(reply: Reply) -> dict[str, Any]:
    """A non-streaming Messages response."""
    return {
        "id": f"msg_{reply.id}",
        "type": "message",
        "role": "assistant",
        "model": reply.model,
        "content": _content(reply),
        "stop_reason": _stop_reason(reply),
        "stop_sequence": None,
        "usage": _usage(reply, reply.usage.output),
    }


def reply_sse(reply: Reply) -> bytes:
    """The streaming Messages response as SSE bytes."""
    start = {**reply_json(reply), "content": [], "stop_reason": None, "usage": _usage(reply, 1)}
    out = [event("message_start", {"type": "message_start", "message": start})]
    index = 0
    if reply.text:
        out.append(
            event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
        )
        for word in reply.words():
            delta = {"type": "text_delta", "text": word}
            out.append(
                event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        out.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    for call in reply.tool_calls:
        block = {"type": "tool_use", "id": call.id, "name": call.flat_name, "input": {}}
        out.append(
            event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
        )
        args = as_json_text(call.arguments_object())
        half = len(args) // 2
        for piece in (args[:half], args[half:]):
            delta = {"type": "input_json_delta", "partial_json": piece}
            out.append(
                event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        out.append(event("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1
    out.append(
        event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": _stop_reason(reply), "stop_sequence": None},
                "usage": {"output_tokens": reply.usage.output},
            },
        )
    )
    out.append(event("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def error_body(error: ScriptedError) -> dict[str, Any]:
    """The Messages API error object for a scripted error."""
    kind = _ERROR_TYPES.get(error.status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": error.message}}
