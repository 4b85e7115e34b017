"""Decoding a results file's text one attempt at a time.

``json.loads`` of a big run builds every attempt's dict before anything else can happen, so
all of them are alive at once (a 50,000-attempt file: ~190 MB of dicts next to its 55 MB of
text), and building the records afterwards adds those on top. :func:`decode_run` walks the
outer shape of the file itself — the top object, its ``tasks`` list, each task's
``attempts`` list — and hands each attempt's dict to a callback as soon as the C scanner has
decoded it; what the callback returns takes its place. Only one attempt's dict is alive at a
time. Every value is still decoded by :mod:`json`'s own scanner, so the data is exactly what
``json.loads`` gives; any text it cannot walk raises :class:`json.JSONDecodeError` (callers
fall back to ``json.loads`` for its message).
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
from collections.abc import Callable
from typing import Any

_WHITESPACE = json.decoder.WHITESPACE.match
_SCANSTRING = json.decoder.scanstring


class _Walker:
    """The outer shape of one run's text: object → ``tasks`` → task → ``attempts``."""

    def __init__(self, text: str, on_attempt: Callable[[dict[str, Any]], Any]):
        self.text = text
        self.on_attempt = on_attempt
        self.scan = json.scanner.make_scanner(json.JSONDecoder())

    def fail(self, what: str, index: int) -> json.JSONDecodeError:
        return json.JSONDecodeError(what, self.text, index)

    def skip(self, index: int) -> int:
        return _WHITESPACE(self.text, index).end()

    def value(self, index: int) -> tuple[Any, int]:
        try:
            return self.scan(self.text, index)
        except StopIteration as stop:
            raise self.fail("Expecting value", stop.value) from None

    def members(self, index: int, special: str, special_value: Callable) -> tuple[dict, int]:
        """The object starting at ``text[index] == "{"``; the value of key ``special`` is
        read by ``special_value`` (when it is where that expects it), every other by json."""
        text = self.text
        found: dict[str, Any] = {}
        index = self.skip(index + 1)
        if text.startswith("}", index):
            return found, index + 1
        while True:
            if not text.startswith('"', index):
                raise self.fail("Expecting property name enclosed in double quotes", index)
            key, index = _SCANSTRING(text, index + 1)
            index = self.skip(index)
            if not text.startswith(":", index):
                raise self.fail("Expecting ':' delimiter", index)
            index = self.skip(index + 1)
            if key == special:
                found[key], index = special_value(index)
            else:
                found[key], index = self.value(index)
            index = self.skip(index)
            if text.startswith("}", index):
                return found, index + 1
            if not text.startswith(",", index):
                raise self.fail("Expecting ',' delimiter", index)
            index = self.skip(index + 1)

    def items(self, index: int, item: Callable[[int], tuple[Any, int]]) -> tuple[Any, int]:
        """The list at ``index`` with each element read by ``item`` (any other value: json)."""
        text = self.text
        if not text.startswith("[", index):
            return self.value(index)
        found: list[Any] = []
        index = self.skip(index + 1)
        if text.startswith("]", index):
            return found, index + 1
        while True:
            value, index = item(index)
            found.append(value)
            index = self.skip(index)
            if text.startswith("]", index):
                return found, index + 1
            if not text.startswith(",", index):
                raise self.fail("Expecting ',' delimiter", index)
            index = self.skip(index + 1)

    def attempt(self, index: int) -> tuple[Any, int]:
        value, index = self.value(index)
        return (self.on_attempt(value) if isinstance(value, dict) else value), index

    def task(self, index: int) -> tuple[Any, int]:
        if not self.text.startswith("{", index):
            return self.value(index)
        return self.members(index, "attempts", lambda at: self.items(at, self.attempt))

    def run(self) -> Any:
        index = self.skip(0)
        if self.text.startswith("{", index):
            data, index = self.members(index, "tasks", lambda at: self.items(at, self.task))
        else:
            data, index = self.value(index)
        if self.skip(index) != len(self.text):
            raise self.fail("Extra data", self.skip(index))
        return data


def decode_run(text: str, on_attempt: Callable[[dict[str, Any]], Any]) -> Any:
    """The JSON value of ``text``, as ``json.loads`` gives it, except that each dict in a
    task's ``attempts`` list (``data["tasks"][i]["attempts"][j]``) is replaced by
    ``on_attempt(that dict)``, called as soon as that attempt is decoded.

    Raises :class:`json.JSONDecodeError` for text that is not JSON (the message may differ
    from ``json.loads``'s; callers that show it decode again with ``json.loads``).
    """
    return _Walker(text, on_attempt).run()
