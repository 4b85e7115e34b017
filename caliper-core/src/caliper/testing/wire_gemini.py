"""Google's Gemini API (``POST /v1beta/models/<model>:generateContent`` and
``:streamGenerateContent?alt=sse``): request view, replies, errors.

The model is named in the URL path, not the body. A conversation is ``contents``: ``user`` and
``model`` entries whose ``parts`` are ``text``, ``functionCall`` or ``functionResponse``; the
system prompt is ``systemInstruction``; tools are ``functionDeclarations``. Usage is
``usageMetadata``, where ``promptTokenCount`` includes the cached tokens.
"""

from __future__ import annotations

import json
import re
from typing import Any

from caliper.testing.conversation import Conversation, ConversationParts, text_of
from caliper.testing.reply import Reply
from caliper.testing.script import ScriptedError
from caliper.testing.sse import event
from caliper.testing.wire_protocol import bare_path

name = "gemini"
API = name
CALL_ID_PREFIX = "fc_"

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

_PATH = re.compile(r"/models/([^/:]+):(generateContent|streamGenerateContent)$")
_STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def matches(path: str) -> bool:
    """Whether a POST to ``path`` is a Gemini ``generateContent`` / ``streamGenerateContent``."""
    return _PATH.search(bare_path(path)) is not None


def model_from(path: str, body: dict[str, Any]) -> str | None:
    """The model a request asks for: the ``models/<model>`` segment of the URL path."""
    found = _PATH.search(bare_path(path))
    return found.group(1) if found else None


def stream_from(path: str, body: dict[str, Any]) -> bool:
    """Whether a request asks for SSE: ``:streamGenerateContent`` in the path."""
    found = _PATH.search(bare_path(path))
    return bool(found and found.group(2) == "streamGenerateContent")


def _parts_text(parts: Any) -> str:
    return "\n".join(
        p["text"] for p in parts or () if isinstance(p, dict) and isinstance(p.get("text"), str)
    )


def parse(body: dict[str, Any]) -> Conversation:
    """The conversation in a Gemini request (``functionResponse`` parts are tool results)."""
    parts = ConversationParts()
    system = body.get("systemInstruction")
    if isinstance(system, dict):
        parts.system.append(_parts_text(system.get("parts")))
    elif isinstance(system, str):
        parts.system.append(system)
    for content in body.get("contents") or ():
        if not isinstance(content, dict):
            continue
        role = content.get("role")
        pieces = [p for p in content.get("parts") or () if isinstance(p, dict)]
        text = _parts_text(pieces)
        if role == "model":
            parts.assistant_count += 1
            if text:
                parts.assistants.append(text)
        elif text:
            parts.users.append(text)
        for piece in pieces:
            call = piece.get("functionCall")
            if isinstance(call, dict):
                args = json.dumps(call.get("args") or {}, ensure_ascii=False)
                parts.calls.append(f"{call.get('name')} {args}")
                parts.ids.append(str(call.get("id", "")))
            response = piece.get("functionResponse")
            if isinstance(response, dict):
                parts.results.append(_response_text(response.get("response")))
                parts.ids.append(str(response.get("id", "")))
    return parts.build(API, {"model": None, "tools": _declarations(body.get("tools"))})


def _response_text(response: Any) -> str:
    if isinstance(response, dict):
        for key in ("output", "error", "content"):
            if key in response:
                value = response[key]
                return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return json.dumps(response, ensure_ascii=False)
    return text_of(response)


def _declarations(tools: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for tool in tools or ():
        if isinstance(tool, dict):
            out.extend(d for d in tool.get("functionDeclarations") or () if isinstance(d, dict))
    return out


def _usage(reply: Reply) -> dict[str, Any]:
    u = reply.usage
    prompt = u.input + u.cache_read + u.cache_creation
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": u.output,
        "totalTokenCount": prompt + u.output,
        "cachedContentTokenCount": u.cache_read,
    }


def _parts(reply: Reply) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if reply.reasoning:
        parts.append({"text": reply.reasoning, "thought": True})
    if reply.text:
        parts.append({"text": reply.text})
    for call in reply.tool_calls:
        parts.append(
            {"functionCall": {"id": call.id, "name": call.flat_name,
                              "args": call.arguments_object()}}
        )  # fmt: skip
    return parts


def _response(reply: Reply, parts: list[dict[str, Any]], *, last: bool) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": reply.model,
                           "responseId": reply.id}  # fmt: skip
    if last:
        candidate["finishReason"] = "STOP"
        out["usageMetadata"] = _usage(reply)
    return out


def reply_json(reply: Reply) -> dict[str, Any]:
    """A non-streaming ``generateContent`` response."""
    return _response(reply, _parts(reply) or [{"text": ""}], last=True)


def reply_sse(reply: Reply) -> bytes:
    """The streaming response: one chunk per word of text, then the calls, usage last."""
    chunks = [[{"text": word}] for word in reply.words()]
    calls = [p for p in _parts(reply) if "functionCall" in p]
    if reply.reasoning:
        chunks.insert(0, [{"text": reply.reasoning, "thought": True}])
    out = [event(None, _response(reply, parts, last=False)) for parts in chunks]
    out.append(event(None, _response(reply, calls, last=True)))
    return b"".join(out)


def error_body(error: ScriptedError) -> dict[str, Any]:
    """Google's error object: ``{"error": {"code", "message", "status"}}``."""
    status = _STATUS_NAMES.get(error.status, "UNKNOWN")
    return {"error": {"code": error.status, "message": error.message, "status": status}}
