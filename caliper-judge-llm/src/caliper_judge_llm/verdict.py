"""Reading the judge model's verdict out of whatever text it returned."""

from __future__ import annotations

import json

import attrs


@attrs.frozen
class ParsedVerdict:
    """A verdict found in the judge's answer."""

    passed: bool
    reasoning: str


def _coerce_passed(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in {"true", "pass", "passed", "yes"}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"false", "fail", "failed", "no"}:
        return False
    return None


def parse_verdict(text: str | None) -> ParsedVerdict | None:
    """The last JSON object with a boolean ``passed`` in ``text``; ``None`` when there is none.

    Tolerates code fences and prose around the object. Never guesses from prose alone.
    """
    if not text:
        return None
    decoder = json.JSONDecoder()
    found: ParsedVerdict | None = None
    index = text.find("{")
    while index != -1:
        try:
            obj, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError:
            index = text.find("{", index + 1)
            continue
        if isinstance(obj, dict) and "passed" in obj:
            passed = _coerce_passed(obj["passed"])
            if passed is not None:
                reasoning = obj.get("reasoning") or obj.get("reason") or ""
                found = ParsedVerdict(passed, str(reasoning).strip())
        index = text.find("{", end)
    return found
