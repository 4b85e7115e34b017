"""What the scripted model server answers, loaded from YAML or JSON into attrs classes.

A script has ordered ``turns`` and/or ``rules``. Every model request is answered by the first
rule whose ``when`` matches it, else by the top-level ``turns``, else by ``fallback_text``.

Ordered turns advance with the conversation, not with the request count: the position of a
request is the number of assistant turns already in it (see ``docs/plugins/testing.md``). A
client that retries sends the same conversation again and gets the same answer; a side call
(a judge, Hermes' approval check) starts at position 0 of its own conversation.

Error and drop turns do not occupy a position: they are served, ``times`` times, before the
answer turn that follows them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml

from caliper.errors import CaliperError
from caliper.system import attrs_classes


class ScriptError(CaliperError):
    """A model-server script is malformed (exit 2)."""

    exit_code = 2


ERROR_STATUSES = (400, 401, 403, 404, 429, 500, 502, 503, 529)


@attrs_classes.frozen
class ToolCall:
    """One tool call the scripted model makes.

    ``arguments`` is a mapping (sent as JSON) or a raw string (sent verbatim, e.g. a freeform
    ``apply_patch`` body when ``custom`` is true). ``namespace`` is the Responses API namespace
    of an MCP tool (``mcp__demo``); other wire APIs fold it into the name as
    ``<namespace>__<name>``.
    """

    name: str
    arguments: Mapping[str, Any] | str = attrs.field(factory=dict)
    namespace: str | None = None
    custom: bool = False


@attrs_classes.frozen
class ScriptedUsage:
    """Token counts reported for one reply, four disjoint parts.

    Each wire API reports them its own way: Anthropic's ``input_tokens`` excludes cache,
    OpenAI's ``input_tokens``/``prompt_tokens`` include ``cache_read`` and ``cache_creation``
    and name only the cached part separately.
    """

    input: int = 100
    output: int = 20
    cache_read: int = 0
    cache_creation: int = 0


@attrs_classes.frozen
class ScriptedError:
    """An HTTP error reply: ``status`` with the wire API's error body and ``message``."""

    status: int
    message: str = "Scripted error"
    retry_after: float | None = None


@attrs_classes.frozen
class Turn:
    """One reply of the scripted model (or an error/drop served instead of one)."""

    text: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: str | None = None
    usage: ScriptedUsage = attrs.field(factory=ScriptedUsage)
    delay: float = 0.0
    error: ScriptedError | None = None
    drop: bool = False
    times: int = 1
    model: str | None = None

    @property
    def is_failure(self) -> bool:
        """True for turns that produce no assistant message (error or drop)."""
        return self.error is not None or self.drop


@attrs_classes.frozen
class When:
    """Conditions a rule needs; every condition given must hold (none given: always)."""

    user_text_contains: str | None = None
    tool_result_contains: str | None = None
    request_contains: str | None = None
    has_tool_results: bool | None = None
    judge: bool | None = None
    no_tools: bool | None = None
    api: str | None = None


@attrs_classes.frozen
class Rule:
    """A conditional answer: ``turns`` indexed by conversation position.

    A rule written with inline turn fields has one turn that answers at every position.
    """

    when: When
    turns: tuple[Turn, ...]
    repeat_single: bool = False
    times: int = -1
    name: str = ""


@attrs_classes.frozen
class Script:
    """A whole script: ``rules`` first, then ordered ``turns``, then ``fallback_text``."""

    rules: tuple[Rule, ...] = ()
    turns: tuple[Turn, ...] = ()
    fallback_text: str = "Done."
    models: tuple[str, ...] = ("caliper-test-model",)


_TURN_KEYS = {
    "text",
    "tool_calls",
    "reasoning",
    "usage",
    "delay",
    "error",
    "drop",
    "times",
    "model",
}
_WHEN_KEYS = {f.name for f in attrs.fields(When)}
_USAGE_KEYS = {f.name for f in attrs.fields(ScriptedUsage)}


def unknown_apis(script: Script, known: tuple[str, ...]) -> ScriptError | None:
    """The error for a rule whose ``when.api`` names none of the ``known`` wires, or None."""
    for number, rule in enumerate(script.rules, start=1):
        if rule.when.api is not None and rule.when.api not in known:
            return _fail(f"rules[{number}].when", f"'api' must be one of {', '.join(known)}")
    return None


def _fail(where: str, what: str) -> ScriptError:
    return ScriptError(
        f"model-server script, {where}: {what}",
        hint="See docs/plugins/testing.md (Script format).",
    )


def _check_keys(data: Mapping[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise _fail(
            where, f"unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}"
        )


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _fail(where, f"expected a mapping, got {type(value).__name__}")
    return value


def _int(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(where, f"expected an integer, got {value!r}")
    return value


def _tool_call(value: Any, where: str) -> ToolCall:
    if isinstance(value, ToolCall):
        return value
    data = _mapping(value, where)
    _check_keys(data, {"name", "arguments", "namespace", "custom"}, where)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise _fail(where, "a tool call needs a non-empty 'name'")
    arguments = data.get("arguments", {})
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, (Mapping, str)):
        raise _fail(where, "'arguments' must be a mapping or a string")
    namespace = data.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise _fail(where, "'namespace' must be a string")
    return ToolCall(name, arguments, namespace, bool(data.get("custom", False)))


def _usage(value: Any, where: str) -> ScriptedUsage:
    data = _mapping(value, where)
    _check_keys(data, _USAGE_KEYS, where)
    return ScriptedUsage(**{k: _int(v, f"{where}.{k}") for k, v in data.items()})


def _error(value: Any, where: str) -> ScriptedError:
    if isinstance(value, int) and not isinstance(value, bool):
        value = {"status": value}
    data = _mapping(value, where)
    _check_keys(data, {"status", "message", "retry_after"}, where)
    status = _int(data.get("status"), f"{where}.status")
    if status not in ERROR_STATUSES:
        raise _fail(where, f"status {status} is not one of {ERROR_STATUSES}")
    retry_after = data.get("retry_after")
    if retry_after is not None and not isinstance(retry_after, (int, float)):
        raise _fail(where, "'retry_after' must be a number of seconds")
    return ScriptedError(status, str(data.get("message", "Scripted error")), retry_after)


def parse_turn(value: Any, where: str, *, keys: set[str] | None = None) -> Turn:
    """One turn from its mapping form; ``keys`` limits which keys are read (rules)."""
    if isinstance(value, Turn):
        return value
    data = _mapping(value, where)
    if keys is None:
        _check_keys(data, _TURN_KEYS, where)
    data = {k: v for k, v in data.items() if k in _TURN_KEYS}
    calls = data.get("tool_calls") or []
    if not isinstance(calls, list):
        raise _fail(where, "'tool_calls' must be a list")
    delay = data.get("delay", 0)
    if isinstance(delay, bool) or not isinstance(delay, (int, float)) or delay < 0:
        raise _fail(where, "'delay' must be a number of seconds >= 0")
    times = _int(data.get("times", 1), f"{where}.times")
    if times == 0 or times < -1:
        raise _fail(where, "'times' must be a positive integer or -1 (forever)")
    for key in ("text", "reasoning", "model"):
        if data.get(key) is not None and not isinstance(data[key], str):
            raise _fail(where, f"'{key}' must be a string")
    turn = Turn(
        text=data.get("text"),
        tool_calls=tuple(_tool_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls)),
        reasoning=data.get("reasoning"),
        usage=_usage(data["usage"], f"{where}.usage") if data.get("usage") else ScriptedUsage(),
        delay=float(delay),
        error=_error(data["error"], f"{where}.error") if data.get("error") is not None else None,
        drop=bool(data.get("drop", False)),
        times=times,
        model=data.get("model"),
    )
    if turn.error and turn.drop:
        raise _fail(where, "a turn cannot both 'error' and 'drop'")
    if turn.is_failure and (turn.text or turn.tool_calls):
        raise _fail(where, "an error or drop turn cannot also have text or tool_calls")
    return turn


def _when(value: Any, where: str) -> When:
    data = _mapping(value or {}, where)
    _check_keys(data, _WHEN_KEYS, where)
    for key in ("has_tool_results", "judge", "no_tools"):
        if key in data and not isinstance(data[key], bool):
            raise _fail(where, f"'{key}' must be true or false")
    for key in ("user_text_contains", "tool_result_contains", "request_contains", "api"):
        if key in data and not isinstance(data[key], str):
            raise _fail(where, f"'{key}' must be a string")
    # `api` names a wire; which wires exist is the server's registry (ModelServer checks it)
    return When(**data)


def _rule(value: Any, where: str) -> Rule:
    data = _mapping(value, where)
    _check_keys(data, _TURN_KEYS | {"when", "turns", "name"}, where)
    when = _when(data.get("when"), f"{where}.when")
    times = _int(data.get("times", -1), f"{where}.times")
    if "turns" in data:
        if set(data) & (_TURN_KEYS - {"times"}):
            raise _fail(where, "give either 'turns' or inline turn fields, not both")
        turns = data["turns"]
        if not isinstance(turns, list) or not turns:
            raise _fail(where, "'turns' must be a non-empty list")
        parsed = tuple(parse_turn(t, f"{where}.turns[{i}]") for i, t in enumerate(turns))
        return Rule(when, parsed, False, times, str(data.get("name", "")))
    single = parse_turn({k: v for k, v in data.items() if k != "times"}, where, keys=_TURN_KEYS)
    return Rule(when, (single,), True, times, str(data.get("name", "")))


def parse_script(data: Any, where: str = "script") -> Script:
    """Build a :class:`Script` from already-loaded YAML/JSON data."""
    if isinstance(data, Script):
        return data
    data = _mapping(data, where)
    _check_keys(data, {"turns", "rules", "fallback_text", "models"}, where)
    turns = data.get("turns") or []
    rules = data.get("rules") or []
    if not isinstance(turns, list) or not isinstance(rules, list):
        raise _fail(where, "'turns' and 'rules' must be lists")
    models = data.get("models") or ["caliper-test-model"]
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise _fail(where, "'models' must be a list of strings")
    return Script(
        rules=tuple(_rule(r, f"rules[{i}]") for i, r in enumerate(rules)),
        turns=tuple(parse_turn(t, f"turns[{i}]") for i, t in enumerate(turns)),
        fallback_text=str(data.get("fallback_text", "Done.")),
        models=tuple(models),
    )


def load_script(path: str | Path) -> Script:
    """Read a script file (YAML or JSON; JSON is valid YAML)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"cannot read model-server script {path}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text) if path.suffix != ".json" else json.loads(text)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise ScriptError(f"model-server script {path} is not valid YAML/JSON: {exc}") from None
    return parse_script(data, str(path))


def as_script(value: Script | Mapping[str, Any] | str | Path) -> Script:
    """Accept a Script, a mapping, or a path to a script file."""
    if isinstance(value, Script):
        return value
    if isinstance(value, (str, Path)):
        return load_script(value)
    return parse_script(value)
