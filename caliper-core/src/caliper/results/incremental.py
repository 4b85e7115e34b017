"""Decoding a results file one attempt at a time, reading its text a piece at a time.

``json.loads`` of a big run builds every attempt's dict before anything else can happen, so
all of them are alive at once (a 50,000-attempt file: ~190 MB of dicts next to its 55 MB of
text), and building the records afterwards adds those on top. :func:`decode_run` walks the
outer shape of the file itself — the top object, its ``tasks`` list, each task's
``attempts`` list — and hands each attempt's dict to a callback as soon as the C scanner has
decoded it; what the callback returns takes its place. Only one attempt's dict is alive at a
time, and only the part of the text not yet decoded (about :data:`CHUNK` characters) is held:
the text is read on demand and what was decoded is dropped.

Every value is still decoded by :mod:`json`'s own scanner, so the data is exactly what
``json.loads`` gives; text it cannot walk raises :class:`json.JSONDecodeError` (its message
and position may differ from ``json.loads``'s: callers that show one read the file again with
``json.loads``).
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
from collections.abc import Callable
from typing import Any

CHUNK = 1 << 16
"""Characters read at a time (a value longer than what is held makes the next read longer)."""

_WHITESPACE = json.decoder.WHITESPACE.match
_SCANSTRING = json.decoder.scanstring


class _Walker:
    """The outer shape of one run's text: object → ``tasks`` → task → ``attempts``.

    ``self.text`` holds the text not yet decoded (from an index the methods pass along); every
    method that may read more or drop what was decoded returns the index in the new text, so
    no caller keeps an index across such a call.
    """

    def __init__(
        self,
        read: Callable[[int], str],
        on_attempt: Callable[[dict[str, Any]], Any],
        on_task: Callable[[dict[str, Any]], Any],
    ):
        self.read = read
        self.on_attempt = on_attempt
        self.on_task = on_task
        self.scan = json.scanner.make_scanner(json.JSONDecoder())
        self.text = ""
        self.at_end = False
        self.whole_tasks = True

    def fail(self, what: str, index: int) -> json.JSONDecodeError:
        return json.JSONDecodeError(what, self.text, index)

    def more(self, index: int) -> int:
        """Read more text (at least as much as is held), dropping what lies before
        ``index``; the same place in the new text, or ``-1`` at the end of the file."""
        if self.at_end:
            return -1
        chunk = self.read(max(CHUNK, len(self.text) - index))
        if not chunk:
            self.at_end = True
            return -1
        self.text = self.text[index:] + chunk
        return 0

    def char(self, index: int, expected: str) -> bool:
        """Whether the text at ``index`` (which :meth:`skip` returned) is ``expected``."""
        return self.text.startswith(expected, index)

    def skip(self, index: int) -> int:
        """The index of the next character that is not whitespace (reading more if needed)."""
        while True:
            index = _WHITESPACE(self.text, index).end()
            if index < len(self.text):
                return index
            moved = self.more(index)
            if moved < 0:
                return index
            index = moved

    def value(self, index: int) -> tuple[Any, int]:
        """One JSON value from ``index`` (which :meth:`skip` returned), by json's scanner.

        No exception outlives its ``except`` block: a ``JSONDecodeError`` holds the text it
        was raised on, and one kept in a local would keep that text (and its frame) alive in
        a reference cycle while the collector is paused.
        """
        while True:
            try:
                value, end = self.scan(self.text, index)
            except StopIteration as stop:
                moved = self.more(index)
                if moved < 0:
                    raise self.fail("Expecting value", stop.value) from None
            except json.JSONDecodeError:
                moved = self.more(index)
                if moved < 0:
                    raise
            else:
                if end < len(self.text) or self.at_end:  # a number may go on in the next read
                    return value, end
                moved = self.more(index)
                if moved < 0:
                    return value, end
            index = moved

    def key(self, index: int) -> tuple[str, int]:
        """An object's key from ``index`` (a ``"``), by json's own string scanner."""
        while True:
            try:
                return _SCANSTRING(self.text, index + 1)
            except json.JSONDecodeError:
                moved = self.more(index)
                if moved < 0:
                    raise
                index = moved

    def members(self, index: int, special: str, special_value: Callable) -> tuple[dict, int]:
        """The object at ``index`` (a ``{``); the value of key ``special`` is read by
        ``special_value``, every other by json's scanner."""
        found: dict[str, Any] = {}
        index = self.skip(index + 1)
        if self.char(index, "}"):
            return found, index + 1
        while True:
            if not self.char(index, '"'):
                raise self.fail("Expecting property name enclosed in double quotes", index)
            key, index = self.key(index)
            index = self.skip(index)
            if not self.char(index, ":"):
                raise self.fail("Expecting ':' delimiter", index)
            index = self.skip(index + 1)
            if key == special:
                found[key], index = special_value(index)
            else:
                found[key], index = self.value(index)
            index = self.skip(index)
            if self.char(index, "}"):
                return found, index + 1
            if not self.char(index, ","):
                raise self.fail("Expecting ',' delimiter", index)
            index = self.skip(index + 1)

    def items(self, index: int, item: Callable[[int], tuple[Any, int]]) -> tuple[Any, int]:
        """The list at ``index`` with each element read by ``item`` (any other value: json)."""
        if not self.char(index, "["):
            return self.value(index)
        found: list[Any] = []
        index = self.skip(index + 1)
        if self.char(index, "]"):
            return found, index + 1
        while True:
            value, index = item(index)
            found.append(value)
            index = self.skip(index)
            if self.char(index, "]"):
                return found, index + 1
            if not self.char(index, ","):
                raise self.fail("Expecting ',' delimiter", index)
            index = self.skip(index + 1)

    def attempt(self, index: int) -> tuple[Any, int]:
        value, index = self.value(index)
        return (self.on_attempt(value) if isinstance(value, dict) else value), index

    def task(self, index: int) -> tuple[Any, int]:
        if not self.char(index, "{"):
            return self.value(index)
        task = None
        if self.whole_tasks:
            task, index = self.whole_task(index)
        if task is not None:
            attempts = task.get("attempts")
            if type(attempts) is list:
                task["attempts"] = [
                    self.on_attempt(a) if isinstance(a, dict) else a for a in attempts
                ]
        else:
            task, index = self.members(index, "attempts", lambda at: self.items(at, self.attempt))
        return self.on_task(task), index

    def whole_task(self, index: int) -> tuple[dict[str, Any] | None, int]:
        """The task object at ``index`` decoded in one call of json's scanner when its whole
        text lies within the next :data:`CHUNK` characters (read first if not held yet), so
        no more than about that much text is decoded at once; ``None`` when it does not (or
        does not decode: the walk then says where), and no more tries in this read (a run's
        tasks are alike in size). The index is that of the same place in the text held."""
        if len(self.text) - index < CHUNK and not self.at_end:
            moved = self.more(index)
            index = index if moved < 0 else moved
        try:
            return self.scan(self.text, index)
        except (StopIteration, json.JSONDecodeError):
            self.whole_tasks = False
            return None, index

    def run(self) -> Any:
        index = self.skip(0)
        if self.char(index, "{"):
            data, index = self.members(index, "tasks", lambda at: self.items(at, self.task))
        else:
            data, index = self.value(index)
        index = self.skip(index)
        if index != len(self.text):
            raise self.fail("Extra data", index)
        return data


def decode_run(
    read: Callable[[int], str],
    on_attempt: Callable[[dict[str, Any]], Any],
    on_task: Callable[[dict[str, Any]], Any] = lambda task: task,
) -> Any:
    """The JSON value of the text ``read`` gives (``read(n)``: up to ``n`` more characters,
    ``""`` at the end, like a text file's ``read``), as ``json.loads`` decodes it, except that
    each dict in a task's ``attempts`` list (``data["tasks"][i]["attempts"][j]``) is replaced
    by ``on_attempt(that dict)``, called as soon as that attempt is decoded, and each task's
    dict (``data["tasks"][i]``, its attempts already replaced) by ``on_task(that dict)``.

    Raises :class:`json.JSONDecodeError` for text that is not JSON.
    """
    return _Walker(read, on_attempt, on_task).run()


def decode_text(text: str, *callbacks: Callable[[dict[str, Any]], Any]) -> Any:
    """:func:`decode_run` of a text already in memory."""
    pieces = [text]
    return decode_run(lambda _size: pieces.pop() if pieces else "", *callbacks)
