"""Reading the HTML report pages as a test must: the attempt data a page carries packed
(gzip-compressed, base64-encoded JSON in ``<script type="application/gzip" id="attempt-data">``)
unpacked, for tests of what is, and is not, in a page."""

from __future__ import annotations

import base64
import gzip
import json
import re

PACKED_ATTEMPTS = re.compile(r'<script type="application/gzip" id="attempt-data">([^<]*)</script>')


def page_attempts(html: str) -> dict:
    """The attempt data a page's viewer reads, unpacked from its one
    ``<script type="application/gzip" id="attempt-data">`` (base64 of gzip of JSON)."""
    found = PACKED_ATTEMPTS.findall(html)
    assert len(found) == 1, f"{len(found)} packed attempt data elements in the page"
    return json.loads(gzip.decompress(base64.b64decode(found[0], validate=True)))


def page_text(html: str) -> str:
    """The page's HTML followed by its unpacked attempt data as JSON text (when it has any):
    what a check that something is nowhere in a page must search."""
    if not PACKED_ATTEMPTS.search(html):
        return html
    return html + "\n" + json.dumps(page_attempts(html), ensure_ascii=False)
