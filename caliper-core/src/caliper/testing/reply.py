"""A scripted turn made concrete for one request: ids chosen, placeholders filled in."""

from __future__ import annotations

import json
import uuid
from typing import Any

import attrs

from caliper.system import attrs_classes
from caliper.testing.script import ScriptedUsage


@attrs_classes.frozen
class ReplyCall:
    """One tool call as it goes on the wire; ``arguments`` is the JSON (or raw) text."""

    id: str
    name: str
    arguments: str
    namespace: str | None = None
    custom: bool = False

    def arguments_object(self) -> Any:
        """The arguments parsed as JSON (a raw non-JSON string is wrapped as ``{"input": s}``)."""
        try:
            return json.loads(self.arguments) if self.arguments.strip() else {}
        except json.JSONDecodeError:
            return {"input": self.arguments}

    @property
    def flat_name(self) -> str:
        """The name for wire APIs without namespaces: ``<namespace>__<name>`` or ``name``."""
        return f"{self.namespace}__{self.name}" if self.namespace else self.name


@attrs_classes.frozen
class Reply:
    """Everything one assistant reply says."""

    model: str
    text: str | None
    tool_calls: tuple[ReplyCall, ...]
    usage: ScriptedUsage
    reasoning: str | None = None
    id: str = attrs.field(factory=lambda: uuid.uuid4().hex[:24])

    def words(self) -> list[str]:
        """The text cut into word-sized streaming deltas (concatenation gives the text back)."""
        text = self.text or ""
        out: list[str] = []
        start = 0
        for i, ch in enumerate(text):
            if ch == " " and i + 1 > start:
                out.append(text[start : i + 1])
                start = i + 1
        if start < len(text):
            out.append(text[start:])
        return out
