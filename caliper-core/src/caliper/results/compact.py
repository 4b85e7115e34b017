"""How much of an attempt's text a results file keeps, and keeping each text once.

Applied to the JSON-ready data of a run when it is written (after the judges ran on the whole
attempt), and undone where it can be when a file is read:

* **once**: when the last assistant turn of a transcript says exactly the final answer (Claude
  Code's does), the turn is written with ``"content": null`` and the attempt gets
  ``"final_answer_turn": <index>``; reading puts the text back. Lossless.
* **per turn**: a turn's text (its content, tool output, and each string in its tool input)
  longer than ``max_turn_chars`` keeps its start and end around a marker saying how long it was;
* **per attempt**: the final answer, then the turns in order, share ``max_attempt_chars``;
  once it is spent, later texts are replaced by a marker. The turns themselves stay, with their
  roles and tool names, and texts of at most ``ALWAYS_KEPT_CHARS`` (a skill name, a path, a
  short command) are always kept, so the evidence of what the agent did is never dropped.

A limit of 0 means no limit.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from caliper.system import attrs_classes

DEFAULT_MAX_TURN_CHARS = 100_000
DEFAULT_MAX_ATTEMPT_CHARS = 1_000_000
FINAL_ANSWER_TURN = "final_answer_turn"
TURN_TEXT_FIELDS = ("content", "tool_output")
ALWAYS_KEPT_CHARS = 200


@attrs_classes.frozen
class StorageLimits:
    """How many characters of text one turn and one attempt may keep (0: no limit)."""

    max_turn_chars: int = DEFAULT_MAX_TURN_CHARS
    max_attempt_chars: int = DEFAULT_MAX_ATTEMPT_CHARS


UNLIMITED = StorageLimits(0, 0)


def marker(original: int, kept: int) -> str:
    """The visible note left where text was cut: the original size and how much was kept."""
    if kept:
        return (
            f"\n[… truncated by caliper: {original:,} characters, the first and last "
            f"{kept // 2:,} kept …]\n"
        )
    return (
        f"[… not kept by caliper: {original:,} characters (the attempt's text limit was reached) …]"
    )


def cut(text: str, limit: int) -> str:
    """``text`` if it fits in ``limit`` (0: always), else its head and tail around a marker."""
    if not limit or len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + marker(len(text), half * 2) + text[len(text) - half :]


class _Budget:
    """What is left of an attempt's character budget."""

    def __init__(self, limits: StorageLimits):
        self.turn = limits.max_turn_chars
        self.left: int | None = limits.max_attempt_chars or None

    def take(self, text: str, *, per_turn: bool = True) -> str:
        text = cut(text, self.turn) if per_turn else text
        if self.left is None:
            return text
        if len(text) <= ALWAYS_KEPT_CHARS:  # names, paths, short commands: always kept
            self.left = max(self.left - len(text), 0)
            return text
        if len(text) <= self.left:
            self.left -= len(text)
            return text
        if self.left < ALWAYS_KEPT_CHARS:  # too little left for a useful head and tail
            self.left = 0
            return marker(len(text), 0)
        kept = cut(text, self.left)
        self.left = 0
        return kept

    def take_value(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.take(value)
        if isinstance(value, Mapping):
            return {k: self.take_value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.take_value(v) for v in value]
        return value


def _last_assistant(turns: list[Any]) -> int | None:
    for index in range(len(turns) - 1, -1, -1):
        turn = turns[index]
        if isinstance(turn, Mapping) and turn.get("role") == "assistant":
            return index
    return None


def compact_attempt(data: MutableMapping[str, Any], limits: StorageLimits) -> None:
    """Apply the rules above to one attempt's JSON-ready data, in place."""
    turns = data.get("transcript")
    answer = data.get("final_answer")
    if isinstance(turns, list) and isinstance(answer, str) and answer:
        index = _last_assistant(turns)
        if index is not None and turns[index].get("content") == answer:
            turns[index] = {**turns[index], "content": None}
            data[FINAL_ANSWER_TURN] = index
    budget = _Budget(limits)
    if isinstance(answer, str):
        data["final_answer"] = budget.take(answer, per_turn=False)
    if not isinstance(turns, list):
        return
    for position, turn in enumerate(turns):
        if not isinstance(turn, Mapping):
            continue
        kept = dict(turn)
        if kept.get("tool_input") is not None:  # in the order they happened: input, output
            kept["tool_input"] = budget.take_value(kept["tool_input"])
        for field in TURN_TEXT_FIELDS:
            if isinstance(kept.get(field), str):
                kept[field] = budget.take(kept[field])
        turns[position] = kept


def expand_attempt(data: MutableMapping[str, Any]) -> None:
    """Undo the "once" rule on one attempt's data read from a file, in place."""
    index = data.pop(FINAL_ANSWER_TURN, None)
    turns = data.get("transcript")
    answer = data.get("final_answer")
    if (
        isinstance(index, int)
        and isinstance(turns, list)
        and 0 <= index < len(turns)
        and isinstance(turns[index], MutableMapping)
        and turns[index].get("content") is None
    ):
        turns[index]["content"] = answer


def _attempts(data: Any) -> list[MutableMapping[str, Any]]:
    found = []
    tasks = data.get("tasks") if isinstance(data, Mapping) else None
    for task in tasks if isinstance(tasks, list) else []:
        attempts = task.get("attempts") if isinstance(task, Mapping) else None
        if isinstance(attempts, list):
            found += [a for a in attempts if isinstance(a, dict)]
    return found


def compact_run(data: Any, limits: StorageLimits) -> None:
    """Apply :func:`compact_attempt` to every attempt of a run's data."""
    for attempt in _attempts(data):
        compact_attempt(attempt, limits)


def expand_run(data: Any) -> None:
    """Apply :func:`expand_attempt` to every attempt of a run's data."""
    for attempt in _attempts(data):
        expand_attempt(attempt)
