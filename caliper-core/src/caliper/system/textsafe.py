"""Making outside text safe to store and to print: the two boundary filters.

Text reaches caliper from places it does not control: spec files, agent output, model
answers. Two things in such text break things later:

* a *lone surrogate* (U+D800–U+DFFF without its partner, e.g. from a JSON ``"\\ud800"``
  escape) cannot be encoded as UTF-8, so writing it to a results file or a pipe fails;
  :func:`well_formed` replaces each one with U+FFFD (a proper surrogate pair becomes the one
  character it stands for);
* *terminal control sequences* (CSI ``ESC [ … 2J`` clear-screen, OSC ``ESC ] 0; … BEL``
  set-title, bare control characters) would be obeyed by the user's terminal if printed
  raw; :func:`printable` removes them, keeping newlines and tabs.
"""

from __future__ import annotations

import functools
import re

REPLACEMENT = "\ufffd"
_SURROGATE = "[\ud800-\udfff]"
# ESC-introduced sequences: OSC/DCS/SOS/PM/APC strings (ended by BEL or ST), CSI sequences,
# then any other two-character escape; then the C1 equivalents; then the lone control bytes.
_ESCAPE = r"""
    (?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]) [^\x07\x1b\x9c]* (?:\x07|\x1b\\|\x9c)?  # OSC & co
  | (?:\x1b\[|\x9b) [0-?]* [ -/]* [@-~]?                                         # CSI
  | \x1b [ -/]* [0-~]?                                                           # ESC x
  | [\x00-\x08\x0b-\x1f\x7f-\x9f]                                                # C0/C1
    """


@functools.cache
def _compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern compiled on first use (importing this module compiles nothing)."""
    return re.compile(pattern, flags)


def well_formed(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (always encodable as UTF-8)."""
    if text.isascii() or not _compiled(_SURROGATE).search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def printable(text: str) -> str:
    """``text`` without terminal escape sequences or control characters (``\\n``, ``\\t``
    kept; ``\\r`` dropped), and with lone surrogates replaced, so printing it is inert."""
    return well_formed(_compiled(_ESCAPE, re.VERBOSE).sub("", text))
