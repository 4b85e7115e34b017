"""``attrs.frozen`` and ``attrs.define`` with one shared ``__repr__``.

attrs writes and compiles a ``__repr__`` for every class it builds, at import. The decorators
here build the class with ``repr=False`` and give it :func:`attrs_repr` instead, one function
that reads the class's ``__attrs_attrs__`` and returns the text attrs' own would:
``Name(a=1, b='x')``, fields declared with ``repr=False`` left out, a field's own repr
callable used, ``...`` for an instance met again while its own repr is being made. A class
that defines ``__repr__`` in its body keeps it, as with attrs.
"""

from __future__ import annotations

import sys
import threading
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


def _with_shared_repr(cls: _C) -> _C:
    if "__repr__" not in cls.__dict__:
        cls.__repr__ = attrs_repr  # type: ignore[assignment]
    return cls


@dataclass_transform(frozen_default=True, field_specifiers=(attrs.field,))
def frozen(cls: _C) -> _C:
    """``attrs.frozen`` (slotted, immutable, compared by value) with :func:`attrs_repr`."""
    return _with_shared_repr(attrs.frozen(cls, repr=False))


@dataclass_transform(field_specifiers=(attrs.field,))
def define(cls: _C) -> _C:
    """``attrs.define`` (slotted, mutable, compared by value) with :func:`attrs_repr`."""
    return _with_shared_repr(attrs.define(cls, repr=False))
