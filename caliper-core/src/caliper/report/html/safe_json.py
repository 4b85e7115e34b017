"""JSON that is safe to put inside an HTML ``<script>`` data element.

Inside a script element the HTML parser ends the element at the first ``</script`` and
treats ``<!--`` specially, whatever JSON thinks of the text. Escaping every ``<``, ``>`` and
``&`` as ``\\u003c``-style escapes (still the same JSON string for ``JSON.parse``) leaves
nothing the parser can react to. U+2028/U+2029 are escaped too, for older JavaScript engines.

Large data (the attempts a page's viewer reads) is packed instead: gzip-compressed and
base64-encoded (:func:`packed_json`), text of nothing but ``A-Z a-z 0-9 + / =``, which the
page unpacks with the browser's own ``DecompressionStream`` (``static/attempts.js``).
"""

from __future__ import annotations

import base64
import gzip
import json
from typing import Any

_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


def script_json(data: Any) -> str:
    """``data`` as compact JSON with no character that could end or confuse a script element.

    The result is meant for ``{{ ... | safe }}`` inside ``<script type="application/json">``:
    it contains no ``<``, ``>`` or ``&`` at all, so neither ``</script>`` nor ``<!--`` can
    appear in it.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    # one str.replace per character, not str.translate: translate looks every character of
    # the text up in a table (about 2 s of a 5,000-attempt page), replace scans at C speed
    for char, escape in _ESCAPES.items():
        if char in text:
            text = text.replace(char, escape)
    return text


PACK_LEVEL = 6
"""gzip level of :func:`packed_json` (zlib's default): 0.1 s and 1.1 MB for the 21 MB of a
5,000-attempt page, where level 9 takes twice the time for a tenth less."""


def packed_json(data: Any) -> str:
    """``data`` as compact UTF-8 JSON, gzip-compressed and base64-encoded.

    The result is meant for ``<script type="application/gzip">``: base64 holds no character
    the HTML parser reacts to, so it needs no escaping, and it is a fraction of the JSON's
    size (the page loads faster). Lone surrogates become ``?``, as in the rest of the page.
    The gzip header carries no time or name, so the same data packs to the same text.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    raw = text.encode("utf-8", errors="replace")
    return base64.b64encode(gzip.compress(raw, compresslevel=PACK_LEVEL, mtime=0)).decode("ascii")
