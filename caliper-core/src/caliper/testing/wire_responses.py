"""OpenAI Responses API (``POST /v1/responses``): request view, replies, errors."""

from __future__ import annotations

import time
from typing import Any

from caliper.testing.conversation import Conversation, ConversationParts, as_json_text, text_of
from caliper.testing.reply import Reply
from caliper.testing.script import ScriptedError
from caliper.testing.sse import event
from caliper.testing.wire_protocol import bare_path, body_model, body_stream

name = "responses"
API = name
CALL_ID_PREFIX = "call_"

_ERROR_CODES = {
    400: ("invalid_request_error", "invalid_request"),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "permission_denied"),
    404: ("invalid_request_error", "not_found"),
    429: ("rate_limit_error", "rate_limit_exceeded"),
}


def matches(path: str) -> bool:
    """Whether a POST to ``path`` is a Responses request (``…/responses``)."""
    return bare_path(path).endswith("/responses")


def model_from(path: str, body: dict[str, Any]) -> str | None:
    """The model a request asks for: the body's ``model``."""
    return body_model(body)


def stream_from(path: str, body: dict[str, Any]) -> bool:
    """Whether a request asks for SSE: the body's ``stream`` flag."""
    return body_stream(body)


def parse(body: dict[str, Any]) -> Conversation:
    """The conversation in a Responses request (developer/system messages count as system)."""
    parts = ConversationParts(
        system=[body["instructions"]] if isinstance(body.get("instructions"), str) else []
    )
    system, users, assistants = parts.system, parts.users, parts.assistants
    results, calls, ids = parts.results, parts.calls, parts.ids
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for item in items or ():
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            text = text_of(item.get("content"))
            if role == "assistant":
                parts.assistant_count += 1
                assistants.append(text)
            elif role in ("system", "developer"):
                system.append(text)
            else:
                users.append(text)
        elif kind in ("function_call", "custom_tool_call"):
            name = item.get("name")
            if item.get("namespace"):
                name = f"{item['namespace']}__{name}"
            calls.append(f"{name} {as_json_text(item.get('arguments', item.get('input')))}")
            ids.append(str(item.get("call_id", "")))
        elif kind.endswith("_output"):
            results.append(text_of(item.get("output")))
            ids.append(str(item.get("call_id", "")))
    return parts.build(API, body)


def _items(reply: Reply) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.reasoning:
        items.append(
            {
                "id": f"rs_{reply.id}",
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": reply.reasoning}],
            }
        )
    if reply.text:
        items.append(
            {
                "id": f"msg_{reply.id}",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": reply.text, "annotations": []}],
            }
        )
    for call in reply.tool_calls:
        if call.custom:
            item: dict[str, Any] = {
                "type": "custom_tool_call",
                "call_id": call.id,
                "name": call.name,
                "input": call.arguments,
            }
        else:
            item = {
                "type": "function_call",
                "call_id": call.id,
                "name": call.name,
                "arguments": call.arguments,
            }
            if call.namespace:
                item["namespace"] = call.namespace
        items.append({"id": f"fc_{call.id}", "status": "completed", **item})
    return items


def _usage(reply: Reply) -> dict[str, Any]:
    u = reply.usage
    prompt = u.input + u.cache_read + u.cache_creation
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": u.cache_read},
        "output_tokens": u.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + u.output,
    }


def _response(reply: Reply, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": f"resp_{reply.id}",
        "object": "response",
        "created_at": int(time.time()),
        "status": status,
        "model": reply.model,
        "output": output,
        "usage": _usage(reply) if status == "completed" else None,
    }


def reply_json(reply: Reply) -> dict[str, Any]:
    """A non-streaming Responses response."""
    return _response(reply, "completed", _items(reply))


def reply_sse(reply: Reply) -> bytes:
    """The streaming Responses response as SSE bytes."""
    out = [
        event(
            "response.created",
            {"type": "response.created", "response": _response(reply, "in_progress", [])},
        )
    ]
    items = _items(reply)
    for index, item in enumerate(items):
        started = {**item, "status": "in_progress"}
        if item["type"] == "message":
            started["content"] = []
        out.append(
            event(
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": index, "item": started},
            )
        )
        if item["type"] == "message":
            for word in reply.words():
                out.append(
                    event(
                        "response.output_text.delta",
                        {
                            "type": "response.output_text.delta",
                            "item_id": item["id"],
                            "output_index": index,
                            "content_index": 0,
                            "delta": word,
                        },
                    )
                )
        out.append(
            event(
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": index, "item": item},
            )
        )
    out.append(
        event(
            "response.completed",
            {"type": "response.completed", "response": _response(reply, "completed", items)},
        )
    )
    return b"".join(out)


def error_body(error: ScriptedError) -> dict[str, Any]:
    """The OpenAI error object for a scripted error."""
    kind, code = _ERROR_CODES.get(error.status, ("server_error", "server_error"))
    return {"error": {"message": error.message, "type": kind, "param": None, "code": code}}
