"""OpenAI Chat Completions API (``POST …/chat/completions``): request view, replies, errors."""

from __future__ import annotations

import time
from typing import Any

from caliper.testing.conversation import Conversation, ConversationParts, text_of
from caliper.testing.reply import Reply
from caliper.testing.sse import event
from caliper.testing.wire_protocol import bare_path, body_model, body_stream
from caliper.testing.wire_responses import error_body

name = "chat"
API = name
CALL_ID_PREFIX = "call_"

__all__ = [
    "API",
    "CALL_ID_PREFIX",
    "error_body",
    "matches",
    "model_from",
    "name",
    "parse",
    "reply_json",
    "reply_sse",
    "stream_from",
]


def matches(path: str) -> bool:
    """Whether a POST to ``path`` is a Chat Completions request (``…/chat/completions``)."""
    return bare_path(path).endswith("/chat/completions")


def model_from(path: str, body: dict[str, Any]) -> str | None:
    """The model a request asks for: the body's ``model``."""
    return body_model(body)


def stream_from(path: str, body: dict[str, Any]) -> bool:
    """Whether a request asks for SSE: the body's ``stream`` flag."""
    return body_stream(body)


def parse(body: dict[str, Any]) -> Conversation:
    """The conversation in a Chat Completions request (``tool`` messages are tool results)."""
    parts = ConversationParts()
    system, users, assistants = parts.system, parts.users, parts.assistants
    results, calls, ids = parts.results, parts.calls, parts.ids
    for msg in body.get("messages") or ():
        if not isinstance(msg, dict):
            continue
        role = msg.get("role")
        text = text_of(msg.get("content"))
        if role in ("system", "developer"):
            system.append(text)
        elif role == "assistant":
            parts.assistant_count += 1
            if text:
                assistants.append(text)
            for call in msg.get("tool_calls") or ():
                fn = call.get("function") or {}
                calls.append(f"{fn.get('name')} {fn.get('arguments', '')}")
                ids.append(str(call.get("id", "")))
        elif role in ("tool", "function"):
            results.append(text)
            ids.append(str(msg.get("tool_call_id", "")))
        else:
            users.append(text)
    return parts.build(API, body)


def _usage(reply: Reply) -> dict[str, Any]:
    u = reply.usage
    prompt = u.input + u.cache_read + u.cache_creation
    return {
        "prompt_tokens": prompt,
        "completion_tokens": u.output,
        "total_tokens": prompt + u.output,
        "prompt_tokens_details": {"cached_tokens": u.cache_read},
    }


def _finish(reply: Reply) -> str:
    return "tool_calls" if reply.tool_calls else "stop"


def reply_json(reply: Reply) -> dict[str, Any]:
    """A non-streaming Chat Completions response."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.flat_name, "arguments": c.arguments},
            }
            for c in reply.tool_calls
        ]
    return {
        "id": f"chatcmpl-{reply.id}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply)}],
        "usage": _usage(reply),
    }


def reply_sse(reply: Reply) -> bytes:
    """The streaming Chat Completions response: chunks, a usage chunk, then ``[DONE]``."""
    base = {
        "id": f"chatcmpl-{reply.id}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": reply.model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return event(None, {**base, "choices": [choice]})

    out = [chunk({"role": "assistant", "content": ""})]
    if reply.reasoning:
        out.append(chunk({"reasoning_content": reply.reasoning}))
    out.extend(chunk({"content": word}) for word in reply.words())
    for index, call in enumerate(reply.tool_calls):
        head = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.flat_name, "arguments": ""},
        }
        out.append(chunk({"tool_calls": [head]}))
        half = len(call.arguments) // 2
        for piece in (call.arguments[:half], call.arguments[half:]):
            out.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
    out.append(chunk({}, _finish(reply)))
    out.append(event(None, {**base, "choices": [], "usage": _usage(reply)}))
    out.append(event(None, "[DONE]"))
    return b"".join(out)
