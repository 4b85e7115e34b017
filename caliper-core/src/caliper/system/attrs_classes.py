"""``attrs.frozen`` and ``attrs.define`` with one shared ``__repr__`` and equality (and
hashing) generated on first use.

attrs writes and compiles ``__repr__``, ``__eq__`` and (frozen) ``__hash__`` for every class it
builds, at import, whether or not they are ever called. The decorators here build the class
with ``repr=False, eq=False`` and then:

* give it :func:`attrs_repr`, one function that reads the class's ``__attrs_attrs__`` and
  returns the text attrs' own would: ``Name(a=1, b='x')``, fields declared with ``repr=False``
  left out, a field's own repr callable used, ``...`` for an instance met again while its own
  repr is being made (a class that defines ``__repr__`` in its body keeps it, as with attrs);
* give it an ``__eq__`` (and, frozen, a ``__hash__``) that, on its first call, has attrs
  generate the class's real ones (on a subclass built for that, without ``__init__`` or
  ``__repr__``), puts them on the class in its own place and calls them: equality and hashing
  are attrs' own, field ``eq=False`` included, at attrs' speed from then on. A ``define``
  class is unhashable, as with attrs.

The classes must not define ``__eq__``, ``__ne__`` or ``__hash__`` themselves (attrs would
keep those; use ``attrs.frozen``/``attrs.define`` for such a class).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import attrs

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover - type checkers read the 3.11 branch

    def dataclass_transform(**_: Any) -> Any:
        return lambda function: function


_C = TypeVar("_C", bound=type)

_in_repr = threading.local()
"""``seen``: the ids of the instances whose repr this thread is making."""


def attrs_repr(self: Any) -> str:
    """``Name(field=value, ...)`` over the fields shown in repr, as attrs writes it."""
    seen: set[int] | None = getattr(_in_repr, "seen", None)
    if seen is None:
        seen = _in_repr.seen = set()
    key = id(self)
    if key in seen:
        return "..."
    seen.add(key)
    try:
        parts = []
        for field in type(self).__attrs_attrs__:
            if field.repr is False:
                continue
            if field.init:
                value = getattr(self, field.name)
            else:
                value = getattr(self, field.name, attrs.NOTHING)
            shown = repr(value) if field.repr is True else field.repr(value)
            parts.append(f"{field.name}={shown}")
        name = type(self).__qualname__.rsplit(">.", 1)[-1]
        return f"{name}({', '.join(parts)})"
    finally:
        seen.discard(key)


def _attrs_comparison(cls: type, make: Callable[..., type], hashable: bool) -> None:
    """Put attrs' generated ``__eq__`` (and ``__hash__`` when ``hashable``) on ``cls``."""
    twin = make(type(cls)(cls.__name__, (cls,), {}), init=False, repr=False)
    cls.__eq__ = twin.__dict__["__eq__"]  # type: ignore[method-assign]
    if hashable:
        cls.__hash__ = twin.__dict__["__hash__"]  # type: ignore[method-assign]


def _compared_on_first_use(cls: _C, make: Callable[..., type], hashable: bool) -> _C:
    """Give ``cls`` an ``__eq__`` (and ``__hash__``) that generate attrs' own when first used."""

    def __eq__(self: Any, other: Any) -> Any:
        _attrs_comparison(cls, make, hashable)
        return cls.__eq__(self, other)

    def __hash__(self: Any) -> int:
        _attrs_comparison(cls, make, hashable)
        return cls.__hash__(self)

    cls.__eq__ = __eq__  # type: ignore[assignment,method-assign]
    cls.__hash__ = __hash__ if hashable else None  # type: ignore[assignment,method-assign]
    return cls


def _build(cls: _C, make: Callable[..., type], hashable: bool) -> _C:
    own = {"__eq__", "__ne__", "__hash__"} & set(vars(cls))
    if own:
        raise TypeError(f"{cls.__qualname__} defines {', '.join(sorted(own))}: use attrs itself")
    built = make(cls, repr=False, eq=False)
    if "__repr__" not in built.__dict__:
        built.__repr__ = attrs_repr
    return _compared_on_first_use(built, make, hashable)


@dataclass_transform(frozen_default=True, field_specifiers=(attrs.field,))
def frozen(cls: _C) -> _C:
    """``attrs.frozen``: slotted, immutable, compared and hashed by value."""
    return _build(cls, attrs.frozen, hashable=True)


@dataclass_transform(field_specifiers=(attrs.field,))
def define(cls: _C) -> _C:
    """``attrs.define``: slotted, mutable, compared by value, unhashable."""
    return _build(cls, attrs.define, hashable=False)
