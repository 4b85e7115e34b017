"""A wire-neutral view of one model request: who said what, and where in the conversation.

Each ``wire_*`` module turns its API's request body into a :class:`Conversation`; the server
matches rules and picks turns on this view only.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable
from typing import Any

import attrs

from caliper.system import attrs_classes

_ID_MARK = re.compile(r"cal([0-9a-f]{16})_p(\d+)")


def new_call_id(prefix: str, position: int) -> str:
    """A unique tool-call id that also records the conversation position it was made at.

    Clients echo these ids back with the tool results, so the server can tell how far the
    conversation got even on wire APIs whose history does not show every assistant turn.
    """
    return f"{prefix}cal{uuid.uuid4().hex[:16]}_p{position}"


@attrs_classes.frozen
class Conversation:
    """What one request carries, flattened to text.

    ``position`` is the number of assistant turns already in the conversation: the index of
    the ordered turn that should answer.
    """

    api: str
    model: str | None
    stream: bool
    system_texts: tuple[str, ...]
    user_texts: tuple[str, ...]
    assistant_texts: tuple[str, ...]
    tool_results: tuple[str, ...]
    tool_call_texts: tuple[str, ...]
    tool_names: tuple[str, ...]
    tools_text: str
    assistant_count: int
    call_ids: tuple[str, ...]

    @property
    def position(self) -> int:
        """Assistant turns already in the conversation (see module docstring)."""
        marked = [int(m.group(2)) + 1 for cid in self.call_ids if (m := _ID_MARK.search(cid))]
        return max([self.assistant_count, *marked])

    @property
    def has_tools(self) -> bool:
        """Whether the request offered the model any tool."""
        return bool(self.tool_names)

    @property
    def has_tool_results(self) -> bool:
        """Whether the conversation already holds a tool result."""
        return bool(self.tool_results)

    def sent_text(self, *, include_tools: bool = True) -> str:
        """Everything the model was shown, flattened: system, messages, tool results (and tools)."""
        parts = [
            *self.system_texts,
            *self.user_texts,
            *self.assistant_texts,
            *self.tool_call_texts,
            *self.tool_results,
        ]
        if include_tools and self.tools_text:
            parts.append(self.tools_text)
        return "\n".join(parts)


@attrs_classes.define
class ConversationParts:
    """What a ``wire_*`` parser collects while walking a request; ``build`` freezes it."""

    system: list[str] = attrs.field(factory=list)
    users: list[str] = attrs.field(factory=list)
    assistants: list[str] = attrs.field(factory=list)
    results: list[str] = attrs.field(factory=list)
    calls: list[str] = attrs.field(factory=list)
    ids: list[str] = attrs.field(factory=list)
    assistant_count: int = 0

    def build(self, api: str, body: dict[str, Any]) -> Conversation:
        """The :class:`Conversation` of ``body`` (model, stream flag and tools read from it)."""
        names, tools_text = tools_summary(body.get("tools") or ())
        return Conversation(
            api=api,
            model=body.get("model"),
            stream=bool(body.get("stream")),
            system_texts=tuple(self.system),
            user_texts=tuple(self.users),
            assistant_texts=tuple(self.assistants),
            tool_results=tuple(self.results),
            tool_call_texts=tuple(self.calls),
            tool_names=names,
            tools_text=tools_text,
            assistant_count=self.assistant_count,
            call_ids=tuple(self.ids),
        )


def text_of(content: Any) -> str:
    """Flatten a message ``content`` (string, list of parts, or nested blocks) to text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(t for t in (text_of(part) for part in content) if t)
    if isinstance(content, dict):
        for key in ("text", "output", "content", "input"):
            if key in content and not isinstance(content[key], (int, float, bool)):
                value = content[key]
                return value if isinstance(value, str) else text_of(value)
        return ""
    return str(content)


def as_json_text(value: Any) -> str:
    """Tool arguments as text (strings kept verbatim)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def tools_summary(tools: Iterable[Any]) -> tuple[tuple[str, ...], str]:
    """Tool names (MCP namespaces expanded as ``ns__tool``) and all tool JSON as one text."""
    names: list[str] = []
    texts: list[str] = []
    for tool in tools or ():
        if not isinstance(tool, dict):
            continue
        texts.append(json.dumps(tool, ensure_ascii=False))
        fn = tool.get("function") if isinstance(tool.get("function"), dict) else None
        name = (fn or tool).get("name")
        if tool.get("type") == "namespace" and isinstance(tool.get("tools"), list):
            names.extend(
                f"{name}__{sub.get('name')}" for sub in tool["tools"] if isinstance(sub, dict)
            )
        elif isinstance(name, str):
            names.append(name)
        elif isinstance(tool.get("type"), str):
            names.append(tool["type"])
    return tuple(names), "\n".join(texts)
