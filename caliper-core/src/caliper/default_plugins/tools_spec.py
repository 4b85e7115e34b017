"""The ``tools:`` task key's value: a list of checks, read and validated without running.

Each check is a mapping with one of ``called``, ``not_called`` or ``order``; ``called`` and
``not_called`` take a tool selector and an optional ``input`` pattern, ``called`` also
``at_least`` / ``at_most``; ``order`` takes a list of steps (a selector, or a mapping with
``called`` and ``input``). A selector is a vocabulary name (``shell``, ``read``, ``write``,
``edit``, ``skill``), ``mcp:SERVER/TOOL`` (``TOOL`` may be ``*``), ``/REGEX/`` matched
against the backend's own tool name, or the backend's own name itself.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

from caliper.plugin.judge import ValueProblem
from caliper.plugin.tools import MCP, VOCABULARY
from caliper.spec.fields import did_you_mean, type_name
from caliper.system import attrs_classes

_MCP = re.compile(r"^mcp:([^/\s]+)/([^/\s]+)$")
CHECK_KEYS = ("called", "not_called", "order")
OPTION_KEYS = ("input", "at_least", "at_most")


@attrs_classes.frozen
class Selector:
    """Which calls a check is about: by vocabulary ``kind``, MCP server/tool, pattern or name."""

    written: str
    kind: str | None = None
    mcp: tuple[str, str] | None = None
    pattern: re.Pattern[str] | None = None
    name: str | None = None


@attrs_classes.frozen
class Step:
    """A selector with an optional ``input`` pattern: one kind of call."""

    selector: Selector
    input: re.Pattern[str] | None = None

    def describe(self) -> str:
        """The step as the spec wrote it, e.g. ``shell with input /^git commit/``."""
        if self.input is None:
            return self.selector.written
        return f"{self.selector.written} with input /{self.input.pattern}/"


@attrs_classes.frozen
class Check:
    """One ``tools:`` check: ``mode`` is ``called``, ``not_called`` or ``order``."""

    mode: str
    steps: tuple[Step, ...]
    at_least: int = 1
    at_most: int | None = None


def selector(written: str) -> Selector | str:
    """The selector ``written`` means, or a message saying what is wrong with it."""
    text = written.strip()
    if not text:
        return "the tool name is empty"
    if text in VOCABULARY and text != MCP:
        return Selector(text, kind=text)
    if text == MCP or text == "mcp:":
        return "write mcp:SERVER/TOOL (TOOL may be *), e.g. mcp:github/create_issue"
    if text.startswith("mcp:"):
        match = _MCP.match(text)
        if match is None:
            return f"{text!r} is not mcp:SERVER/TOOL (TOOL may be *)"
        return Selector(text, mcp=(match.group(1), match.group(2)))
    if len(text) >= 2 and text.startswith("/") and text.endswith("/"):
        try:
            return Selector(text, pattern=re.compile(text[1:-1]))
        except re.error as exc:
            return f"{text} is not a valid regular expression: {exc}"
    if _near_miss(text):
        hint = did_you_mean(text.lower(), VOCABULARY)
        return f"{text!r} is not a tool name of the vocabulary.{hint} {_NAMES}"
    return Selector(text, name=text)


def _near_miss(text: str) -> bool:
    """Whether ``text`` looks like a misspelt vocabulary name (``shel``) rather than a
    backend's own tool name (``Bash``, ``skill_view``): plain lower-case letters, close to one.
    """
    if not re.fullmatch(r"[a-z]+", text) or text in VOCABULARY:
        return False
    return bool(difflib.get_close_matches(text, VOCABULARY, n=1, cutoff=0.75))


_NAMES = (
    "Tool names: shell, read, write, edit, skill, mcp:SERVER/TOOL, /REGEX/, or the "
    "backend's own tool name."
)


def _pattern(value: Any, path: tuple[str | int, ...]) -> re.Pattern[str] | ValueProblem:
    if not isinstance(value, str):
        return ValueProblem(f"expected a regular expression, found {type_name(value)}", path)
    try:
        return re.compile(value)
    except re.error as exc:
        return ValueProblem(f"{value!r} is not a valid regular expression: {exc}", path)


def _step(value: Any, path: tuple[str | int, ...], problems: list[ValueProblem]) -> Step | None:
    """A step from a selector string or ``{called: SELECTOR, input: REGEX}``."""
    if isinstance(value, dict):
        unknown = [k for k in value if k not in ("called", "input")]
        if unknown or "called" not in value:
            problems.append(ValueProblem("an order step is a tool name or {called, input}", path))
            return None
        step = _step(value["called"], (*path, "called"), problems)
        if step is None or "input" not in value:
            return step
        compiled = _pattern(value["input"], (*path, "input"))
        if isinstance(compiled, ValueProblem):
            problems.append(compiled)
            return None
        return Step(step.selector, compiled)
    if not isinstance(value, str):
        problems.append(ValueProblem(f"expected a tool name, found {type_name(value)}", path))
        return None
    chosen = selector(value)
    if isinstance(chosen, str):
        problems.append(ValueProblem(chosen, path))
        return None
    return Step(chosen)


def _count(value: Any, key: str, path: tuple[str | int, ...]) -> int | ValueProblem:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return ValueProblem(f"{key} must be a whole number ≥ 0, found {value!r}", (*path, key))
    return value


def _bounds(
    entry: dict[str, Any], path: tuple[str | int, ...], problems: list[ValueProblem]
) -> tuple[int, int | None]:
    low: int = 1
    high: int | None = None
    for key in ("at_least", "at_most"):
        if key not in entry:
            continue
        counted = _count(entry[key], key, path)
        if isinstance(counted, ValueProblem):
            problems.append(counted)
        elif key == "at_least":
            low = counted
        else:
            high = counted
    if "at_most" in entry and "at_least" not in entry and high is not None:
        low = min(1, high)
    if high is not None and low > high:
        problems.append(
            ValueProblem(f"at_least {low} is more than at_most {high}: no attempt can pass", path)
        )
    elif high == 0:
        problems.append(ValueProblem("at_most: 0 means never: write not_called instead", path))
    return low, high


def _check(entry: Any, path: tuple[str | int, ...], problems: list[ValueProblem]) -> Check | None:
    if not isinstance(entry, dict):
        problems.append(
            ValueProblem(
                f"expected a check such as {{called: shell}}, found {type_name(entry)}", path
            )
        )
        return None
    modes = [k for k in CHECK_KEYS if k in entry]
    unknown = [k for k in entry if k not in CHECK_KEYS and k not in OPTION_KEYS]
    for key in unknown:
        hint = did_you_mean(str(key), (*CHECK_KEYS, *OPTION_KEYS))
        problems.append(ValueProblem(f"unknown key {key!r} in a tools: check.{hint}", path))
    if len(modes) != 1:
        problems.append(
            ValueProblem("a tools: check has exactly one of called, not_called, order", path)
        )
        return None
    mode = modes[0]
    if mode == "order":
        return _order(entry, path, problems)
    if mode == "not_called" and ("at_least" in entry or "at_most" in entry):
        problems.append(ValueProblem("not_called takes no at_least/at_most", path))
        return None
    before = len(problems)
    step = _step(entry[mode], (*path, mode), problems)
    low, high = _bounds(entry, path, problems) if mode == "called" else (1, None)
    compiled = _pattern(entry["input"], (*path, "input")) if "input" in entry else None
    if isinstance(compiled, ValueProblem):
        problems.append(compiled)
    if step is None or len(problems) > before:
        return None
    return Check(mode, (Step(step.selector, compiled or step.input),), low, high)


def _order(entry: dict[str, Any], path: tuple[str | int, ...], problems: list[ValueProblem]):
    extra = [k for k in entry if k != "order"]
    if extra:
        problems.append(ValueProblem("order takes no other key: put input in each step", path))
    steps_value = entry["order"]
    if not isinstance(steps_value, list) or len(steps_value) < 2:
        problems.append(ValueProblem("order is a list of at least two tool steps", path))
        return None
    before = len(problems)
    steps = [_step(item, (*path, "order", i), problems) for i, item in enumerate(steps_value)]
    if len(problems) > before or extra:
        return None
    return Check("order", tuple(s for s in steps if s is not None))


def parse(value: Any) -> tuple[list[Check], list[ValueProblem]]:
    """The checks of a ``tools:`` value, and what is wrong with it."""
    if not isinstance(value, list) or not value:
        return [], [
            ValueProblem(
                "expected a non-empty list of checks, e.g. [{called: shell, input: '^git '}], "
                f"found {type_name(value)}"
            )
        ]
    problems: list[ValueProblem] = []
    checks = [_check(entry, (index,), problems) for index, entry in enumerate(value)]
    return [c for c in checks if c is not None], problems
