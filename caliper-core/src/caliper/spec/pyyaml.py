"""PyYAML, imported with its reader's non-printable-character pattern compiled from the
short list of characters it matches.

``yaml.reader.Reader.NON_PRINTABLE`` is written as "every character but" the printable
ranges, up to ``\\U0010ffff``. Compiling that negated class walks each of its ~63,000 Basic
Multilingual Plane characters in Python (``re._compiler``): about a quarter of PyYAML's import,
paid by every command that reads a spec. While ``yaml`` is imported here, ``re.compile`` is
given, for exactly that pattern, the class of the characters it matches (the C0 and C1 controls
but tab, line feed, carriage return and NEL, DEL, the surrogates, U+FFFE and U+FFFF), which
matches the same characters (a test checks every code point). Any other pattern, and a PyYAML
whose pattern differs, compiles as written; ``re.compile`` is restored once the import is done.
"""

from __future__ import annotations

import re
import sys
from typing import Any

PYYAML_NON_PRINTABLE = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
"""PyYAML's own pattern (``yaml/reader.py``)."""

NON_PRINTABLE_LISTED = "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]"
"""The characters :data:`PYYAML_NON_PRINTABLE` matches, listed."""

_compile = re.compile


def _compile_listed(pattern: Any, flags: int = 0) -> re.Pattern[Any]:
    if pattern == PYYAML_NON_PRINTABLE and flags == 0:
        pattern = NON_PRINTABLE_LISTED
    return _compile(pattern, flags)


if "yaml" not in sys.modules:
    re.compile = _compile_listed
try:
    import yaml  # while re.compile lists the characters of PyYAML's pattern
finally:
    re.compile = _compile

__all__ = ["yaml"]
