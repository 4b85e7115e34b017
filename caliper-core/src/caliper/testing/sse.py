"""Server-sent-event framing shared by the wire modules."""

from __future__ import annotations

import json
from typing import Any


def event(name: str | None, data: Any) -> bytes:
    """One SSE event: optional ``event:`` line, a JSON (or literal string) ``data:`` line.

    Text the wire cannot carry as UTF-8 (a lone surrogate a script asks for, to test how
    clients cope) is sent as a JSON ``\\ud800`` escape, as a real provider would.
    """
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    head = f"event: {name}\n" if name else ""
    try:
        return f"{head}data: {payload}\n\n".encode()
    except UnicodeEncodeError:
        if isinstance(data, str):
            raise
        return f"{head}data: {json.dumps(data)}\n\n".encode()
