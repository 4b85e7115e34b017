"""Spotting an agent that read what it must not: the spec, saved results, forbidden files.

Every tool call's input in the transcript is matched against the spec's
``sandbox.forbidden_files`` regexes plus two built-in ones (the spec file itself and the
``.caliper/`` folder where results are saved). A match makes the attempt a ``cheat``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from caliper.errors import SpecError
from caliper.plugin.attempt import Turn

SNIPPET_LENGTH = 200
_BOUNDARY = r"(?:^|(?<=[\s/\"'=:]))"


def forbidden_patterns(
    forbidden_files: Sequence[str], *, spec_file_name: str, spec_path: str
) -> list[re.Pattern[str]]:
    """Compile the spec's patterns plus the built-in ones (spec file, ``.caliper/``)."""
    patterns = []
    for raw in forbidden_files:
        try:
            patterns.append(re.compile(raw))
        except re.error as exc:
            raise SpecError(
                f"sandbox.forbidden_files: {raw!r} is not a valid regex ({exc})."
            ) from None
    patterns.append(re.compile(re.escape(spec_path)))
    patterns.append(re.compile(_BOUNDARY + re.escape(spec_file_name) + r"(?![\w.-])"))
    patterns.append(re.compile(_BOUNDARY + r"\.caliper/"))
    return patterns


def tool_input_text(value: Any) -> str:
    """A tool call's input as one string (dicts and lists serialised as JSON)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def find_forbidden_reads(
    transcript: Iterable[Turn], patterns: Sequence[re.Pattern[str]]
) -> list[str]:
    """Each tool call whose input matches a forbidden pattern, as ``tool: input`` text."""
    hits = []
    for turn in transcript:
        if turn.role != "tool":
            continue
        text = tool_input_text(turn.tool_input)
        candidates = [text]
        if not isinstance(turn.tool_input, str) and turn.tool_input is not None:
            candidates.extend(_strings(turn.tool_input))
        if any(p.search(c) for p in patterns for c in candidates):
            snippet = text if len(text) <= SNIPPET_LENGTH else text[:SNIPPET_LENGTH] + "…"
            hits.append(f"{turn.tool_name or 'tool'}: {snippet}")
    return hits


def _strings(value: Any) -> list[str]:
    """Every string nested in a tool input (so ``$``-anchored patterns match raw values)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return []
