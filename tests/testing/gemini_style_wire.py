"""A tiny Gemini-style wire module, as a plugin author would write one for the model server.

The model is in the URL (``POST /v1beta/models/<model>:generateContent`` answers with JSON,
``…:streamGenerateContent?alt=sse`` with SSE), the conversation is in ``contents[].parts[]``
(``text``, ``functionCall``, ``functionResponse``), a reply is
``candidates[0].content.parts[]`` plus ``usageMetadata`` token counts. Tests only.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from caliper.testing.conversation import Conversation, ConversationParts, as_json_text, text_of
from caliper.testing.reply import Reply
from caliper.testing.script import ScriptedError
from caliper.testing.sse import event
from caliper.testing.wire_protocol import bare_path

name = "gemini-style"
CALL_ID_PREFIX = "gem_"

_ROUTE = re.compile(r"/models/(?P<model>[^/:]+):(?P<method>streamGenerateContent|generateContent)$")
_STATUS = {401: "UNAUTHENTICATED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL"}


def matches(path: str) -> bool:
    """``…/models/<model>:generateContent`` or ``…:streamGenerateContent`` (any query)."""
    return _ROUTE.search(bare_path(path)) is not None


def model_from(path: str, body: dict[str, Any]) -> str | None:
    """The model named in the URL path."""
    found = _ROUTE.search(bare_path(path))
    return found["model"] if found else None


def stream_from(path: str, body: dict[str, Any]) -> bool:
    """Streaming is the URL's method, not a body field."""
    found = _ROUTE.search(bare_path(path))
    return bool(found and found["method"] == "streamGenerateContent")


def parse(body: dict[str, Any]) -> Conversation:
    """The conversation in ``systemInstruction`` and ``contents`` (``model`` is the assistant)."""
    parts = ConversationParts(system=[text_of((body.get("systemInstruction") or {}).get("parts"))])
    for content in body.get("contents") or ():
        role = content.get("role")
        if role == "model":
            parts.assistant_count += 1
        for part in content.get("parts") or ():
            if "functionCall" in part:
                call = part["functionCall"]
                parts.calls.append(f"{call.get('name')} {as_json_text(call.get('args'))}")
            elif "functionResponse" in part:
                parts.results.append(as_json_text(part["functionResponse"].get("response")))
            elif "text" in part:
                (parts.assistants if role == "model" else parts.users).append(part["text"])
    declared = [d for tool in body.get("tools") or () for d in tool.get("functionDeclarations", ())]
    conv = parts.build(name, {"tools": declared})
    return attrs.evolve(conv, tool_names=tuple(d["name"] for d in declared))


def _response(reply: Reply, parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
    u = reply.usage
    prompt = u.input + u.cache_read + u.cache_creation
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "usageMetadata": {
            "promptTokenCount": prompt,
            "candidatesTokenCount": u.output,
            "cachedContentTokenCount": u.cache_read,
            "totalTokenCount": prompt + u.output,
        },
        "modelVersion": reply.model,
    }


def _parts(reply: Reply) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"text": reply.text}] if reply.text else []
    for call in reply.tool_calls:
        out.append({"functionCall": {"name": call.flat_name, "args": call.arguments_object()}})
    return out


def reply_json(reply: Reply) -> dict[str, Any]:
    """``:generateContent``: one response with every part."""
    return _response(reply, _parts(reply), "STOP")


def reply_sse(reply: Reply) -> bytes:
    """``:streamGenerateContent?alt=sse``: a response per word, then the calls and the end."""
    chunks = [_response(reply, [{"text": word}], None) for word in reply.words()]
    calls = [p for p in _parts(reply) if "functionCall" in p]
    chunks.append(_response(reply, calls, "STOP"))
    return b"".join(event(None, chunk) for chunk in chunks)


def error_body(error: ScriptedError) -> dict[str, Any]:
    """Google's error object: ``code``, ``message``, ``status``."""
    status = _STATUS.get(error.status, "UNKNOWN")
    return {"error": {"code": error.status, "message": error.message, "status": status}}
