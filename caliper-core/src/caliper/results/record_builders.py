"""Records built straight from a results file's decoded dicts, one generated function per
record class.

The incremental read (:func:`caliper.results.codec.read_file`) turns each attempt's dict into
its :class:`~caliper.results.models.AttemptRecord`. cattrs' generated function gathers the
fields present into a keyword dict and calls one hook per field; on a big run that is most
of the read. The functions made here call the record class with every field in order
(absent ones take their defaults), converting each value inline as the reading converter
does: ``str``, ``int``, ``float`` and ``bool`` fields by calling the type (skipped when the
value already has it), enums by their value, nested records by their own function, and
anything else (mappings, paths) by the converter's own hook for its type.

They are stricter than cattrs, never looser: a value of an unexpected JSON shape (a record
that is not an object, a list that is not a list, an unknown enum value, a required field
absent) raises, and the caller then structures that dict with the converter, which gives
what the plain read gives or raises as it does. So whenever a function here returns a
record, it is the record the converter would have built.
"""

from __future__ import annotations

import enum
import functools
import types
import typing
from collections.abc import Callable
from typing import Any

import attrs
import cattrs

from caliper.results.models import STORED_JUDGE_FIELDS, CheckRecord

Builder = Callable[[Any], Any]

_CALLED = (str, int, float, bool)
"""Types the reading converter structures as ``type(value)``."""
_JUDGE_KEYS = frozenset(STORED_JUDGE_FIELDS.values())


class BuilderLayoutError(TypeError):
    """A record class these functions cannot build positionally (the converter is used)."""


class _Unexpected(ValueError):
    """A value of a shape the generated functions leave to the converter."""


def _refuse(value: Any) -> Any:
    raise _Unexpected(type(value).__name__)


class _Generator:
    """Source of one builder function per record class, with the names it uses."""

    def __init__(self, conv: cattrs.Converter, prepare: dict[type, Builder]) -> None:
        self.conv = conv
        self.prepare = prepare
        self.names: dict[str, Any] = {"refuse": _refuse, "M": _MISSING}
        self.made: dict[type, str] = {}
        self.sources: list[str] = []
        self.share: int | None = None
        """While a field is generated: share its text up to this length (``None``: not)."""

    def bind(self, value: Any, prefix: str) -> str:
        name = f"{prefix}{len(self.names)}"
        self.names[name] = value
        return name

    def value(self, tp: Any, var: str) -> str:
        """An expression converting the JSON value in the name ``var`` to ``tp``."""
        if tp is Any:
            return var
        if tp in _CALLED and self._called(tp):
            kind = self.bind(tp, "T")
            if tp is str and self.share is not None:
                short = "" if self.share < 0 else f" and len({var}) <= {self.share}"
                return (
                    f"(same({var}, {var}) if type({var}) is str{short} "
                    f"else {var} if type({var}) is str else str({var}))"
                )
            return f"({var} if type({var}) is {kind} else {kind}({var}))"
        if tp == dict[str, Any] and self.share is not None:
            hook, kind = self.bind(self.conv.get_structure_hook(tp), "H"), self.bind(tp, "T")
            shared = self.bind(_shared_mapping, "S")
            return f"({shared}({var}, same) if type({var}) is dict else {hook}({var}, {kind}))"
        if isinstance(tp, type) and issubclass(tp, enum.Enum) and self._called(tp):
            members = self.bind({member.value: member for member in tp}, "E")
            return f"{members}[{var}]"
        if isinstance(tp, type) and attrs.has(tp) and self._generated(tp):
            return f"{self.record(tp)}({var})"
        inner = _optional_inner(tp)
        if inner is not None and self._is_reading_optional(tp):
            return f"(None if {var} is None else {self.value(inner, var)})"
        if typing.get_origin(tp) is list and len(typing.get_args(tp)) == 1:
            item = f"i{len(self.names)}"
            self.names[item] = None  # keeps the loop names of nested lists apart
            each = self.value(typing.get_args(tp)[0], item)
            return f"([{each} for {item} in {var}] if type({var}) is list else refuse({var}))"
        hook, kind = self.bind(self.conv.get_structure_hook(tp), "H"), self.bind(tp, "T")
        return f"{hook}({var}, {kind})"

    def _called(self, tp: type) -> bool:
        return self.conv.get_structure_hook(tp) is cattrs.BaseConverter._structure_call

    def _generated(self, cls: type) -> bool:
        """Whether ``cls``'s hook is cattrs' own generated one (no hook of caliper's), or one
        this module knows how to prepare for."""
        return cls in self.prepare or self.conv.get_structure_hook(cls).__name__.startswith(
            "structure_"
        )

    def _is_reading_optional(self, tp: Any) -> bool:
        return self.conv.get_structure_hook(tp).__qualname__.startswith(
            "_reading_converter.<locals>.optional"
        )

    def record(self, cls: type) -> str:
        """The name of the builder of ``cls`` (made on first use)."""
        if cls in self.made:
            return self.made[cls]
        name = f"build_{cls.__name__}_{len(self.made)}"
        self.made[cls] = name
        attrs.resolve_types(cls)
        lines = [f"def {name}(d):", "    if type(d) is not dict:", "        refuse(d)"]
        if cls in self.prepare:
            lines.append(f"    d = {self.bind(self.prepare[cls], 'P')}(d)")
        lines.append("    get = d.get")
        arguments = []
        for position, field in enumerate(attrs.fields(cls)):
            if not field.init or field.kw_only or field.alias != field.name:
                raise BuilderLayoutError(f"{cls.__name__}.{field.name} is not positional")
            outer, self.share = self.share, SHARED.get((cls.__name__, field.name))
            arguments.append(self._field(lines, field, f"a{position}"))
            self.share = outer
        lines.append(f"    return {self.bind(cls, 'C')}({', '.join(arguments)})")
        self.sources.append("\n".join(lines) + "\n")
        return name

    def _field(self, lines: list[str], field: attrs.Attribute, var: str) -> str:
        """Add the lines setting ``var`` to the field's value; ``var``."""
        convert = self.value(field.type, var)
        if field.default is attrs.NOTHING:
            lines.append(f"    {var} = d[{field.name!r}]")
            lines.append(f"    {var} = {convert}")
            return var
        inner = _optional_inner(field.type)
        if field.default is None and inner is not None and self._is_reading_optional(field.type):
            lines.append(f"    {var} = get({field.name!r})")  # absent or null: None
            lines.append(f"    if {var} is not None:")
            lines.append(f"        {var} = {self.value(inner, var)}")
            return var
        if isinstance(field.default, attrs.Factory):  # type: ignore[arg-type]
            if field.default.takes_self:
                raise BuilderLayoutError(f"{field.name}'s default takes self")
            default = f"{self.bind(field.default.factory, 'F')}()"
        else:
            default = self.bind(field.default, "D")
        lines.append(f"    {var} = get({field.name!r}, M)")
        lines.append(f"    {var} = {default} if {var} is M else {convert}")
        return var


_MISSING = object()
LONGEST = 256
"""Longest text that may be long (reasons, errors, final answers) shared: a long one is
rarely repeated and not worth hashing."""
SHARED: dict[tuple[str, str], int] = {
    **{("AttemptRecord", name): -1 for name in ("task_name", "model")},
    **{("AttemptRecord", name): LONGEST for name in ("reason", "error", "final_answer")},
    **{("AttemptRecord", name): -1 for name in ("activated", "undeclared", "built_in")},
    ("CheckRecord", "key"): LONGEST,
    ("CheckRecord", "reason"): LONGEST,
    ("CheckRecord", "details"): -1,
    **{("Turn", name): -1 for name in ("role", "tool_name")},
}
"""Text fields a big run repeats in every attempt (record class, field) → the longest text
shared (``-1``: any): one string object per distinct value of a read, as
:class:`caliper.results.codec._SharedStrings` keeps them (memory only; values are the same).
A check's ``details`` share their keys, text values and the text in their lists."""


def _shared_mapping(details: dict[str, Any], same: Callable[[str, str], str]) -> dict[str, Any]:
    """A check's details as the converter structures them (the same keys and values), its
    keys, texts and texts in lists shared."""
    return {
        same(k, k) if type(k) is str else str(k): (
            same(v, v)
            if type(v) is str
            else [same(n, n) if type(n) is str else n for n in v]
            if type(v) is list
            else v
        )
        for k, v in details.items()
    }


def _optional_inner(tp: Any) -> Any | None:
    """``X`` of ``X | None``, else ``None``."""
    args = typing.get_args(tp)
    union = typing.get_origin(tp) in (typing.Union, types.UnionType)
    if union and len(args) == 2 and type(None) in args:
        return next(arg for arg in args if arg is not type(None))
    return None


@functools.cache
def _compiled(
    conv: cattrs.Converter, cls: type, stored_check: Callable[[Any], Any]
) -> tuple[types.CodeType, dict[str, Any], str] | None:
    """The compiled builders of ``cls`` and what they refer to (made once per process; a
    read only runs the code, with its own ``same``), with the name of ``cls``'s builder."""

    def prepared_check(data: dict[str, Any]) -> Any:
        details = data.get("details")
        if (
            type(details) is dict
            and _JUDGE_KEYS.isdisjoint(details)
            and type(data.get("usage")) in (dict, type(None))
        ):
            return data  # nothing to take out: stored_check would give an equal copy
        return stored_check(data)

    generator = _Generator(conv, {CheckRecord: prepared_check})
    try:
        name = generator.record(cls)
    except BuilderLayoutError:
        return None
    code = compile("".join(generator.sources), f"<record builders {cls.__name__}>", "exec")
    return code, generator.names, name


def builder(
    conv: cattrs.Converter,
    cls: type,
    stored_check: Callable[[Any], Any],
    same: Callable[[str, str], str],
) -> Builder | None:
    """A function building ``cls`` from its decoded dict as ``conv`` (the reading converter)
    would, raising where the converter must decide (see the module's docstring); ``None``
    when ``cls`` cannot be built positionally. The texts of :data:`SHARED` are passed through
    ``same`` (``setdefault`` of the read's table of strings). A check's stored form is first
    turned into the converter's by ``stored_check`` (the typed judge fields taken out of its
    details) when its details hold any of them."""
    compiled = _compiled(conv, cls, stored_check)
    if compiled is None:
        return None
    code, names, name = compiled
    scope = {**names, "same": same}
    exec(code, scope)
    return scope[name]
