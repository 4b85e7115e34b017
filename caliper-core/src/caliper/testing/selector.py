"""Choose which scripted turn answers a request (rules, ordered turns, fallback)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from caliper.system import attrs_classes
from caliper.testing.conversation import Conversation
from caliper.testing.script import Rule, Script, Turn, When

try:  # the marker lives in core; keep the server importable on its own
    from caliper.plugin.judge import LLM_JUDGE_MARKER
except ImportError:  # pragma: no cover
    LLM_JUDGE_MARKER = "[caliper-judge-request]"


@attrs_classes.frozen
class Choice:
    """The turn picked for a request and a label saying where it came from."""

    turn: Turn | None
    label: str
    position: int

    @property
    def is_fallback(self) -> bool:
        """True when nothing in the script answered (the fallback text is sent)."""
        return self.turn is None


def matches(when: When, conv: Conversation) -> bool:
    """Whether every condition of ``when`` holds for this request."""
    if when.api is not None and when.api != conv.api:
        return False
    if when.user_text_contains is not None and when.user_text_contains not in "\n".join(
        conv.user_texts
    ):
        return False
    if when.tool_result_contains is not None and when.tool_result_contains not in "\n".join(
        conv.tool_results
    ):
        return False
    if when.request_contains is not None and when.request_contains not in conv.sent_text():
        return False
    if when.has_tool_results is not None and when.has_tool_results != conv.has_tool_results:
        return False
    if when.judge is not None and when.judge != (LLM_JUDGE_MARKER in conv.sent_text()):
        return False
    return when.no_tools is None or when.no_tools != conv.has_tools


class Selector:
    """Holds the script and the per-server counters (``times``) behind a lock."""

    def __init__(self, script: Script):
        self.script = script
        self._served: dict[str, int] = {}
        self._lock = threading.Lock()

    def _left(self, key: str, times: int) -> bool:
        return times == -1 or self._served.get(key, 0) < times

    def _use(self, key: str) -> None:
        self._served[key] = self._served.get(key, 0) + 1

    def _pick(self, turns: Sequence[Turn], position: int, key: str) -> Choice | None:
        slot = 0
        pending: list[int] = []
        for i, turn in enumerate(turns):
            if turn.is_failure:
                pending.append(i)
                continue
            if position >= slot and (turn.times == -1 or position < slot + turn.times):
                return self._failure(turns, pending, position, key) or Choice(
                    turn, f"{key}[{i}]", position
                )
            pending = []
            slot += turn.times if turn.times != -1 else 0
        if pending and position >= slot:
            return self._failure(turns, pending, position, key)
        return None

    def _failure(
        self, turns: Sequence[Turn], pending: list[int], position: int, key: str
    ) -> Choice | None:
        for i in pending:
            label = f"{key}[{i}]"
            if self._left(label, turns[i].times):
                self._use(label)
                return Choice(turns[i], label, position)
        return None

    def _rule(self, rule: Rule, index: int, conv: Conversation) -> Choice | None:
        key = f"rules[{index}]"
        if not self._left(key, rule.times) or not matches(rule.when, conv):
            return None
        if rule.repeat_single:
            choice = Choice(rule.turns[0], key, conv.position)
        else:
            choice = self._pick(rule.turns, conv.position, f"{key}.turns")
        if choice is not None:
            self._use(key)
        return choice

    def choose(self, conv: Conversation) -> Choice:
        """The turn that answers ``conv`` (updates the ``times`` counters)."""
        with self._lock:
            for index, rule in enumerate(self.script.rules):
                choice = self._rule(rule, index, conv)
                if choice is not None:
                    return choice
            choice = self._pick(self.script.turns, conv.position, "turns")
            return choice or Choice(None, "fallback", conv.position)
