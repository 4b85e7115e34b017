"""Server-sent-event framing shared by the wire modules."""

from __future__ import annotations

import json
from typing import Any


def event(name: str | None, data: Any) -> bytes:
    """One SSE event: optional ``event:`` line, a JSON (or literal string) ``data:`` line."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {payload}\n\n".encode()
