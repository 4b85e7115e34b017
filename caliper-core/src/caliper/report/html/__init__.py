"""Self-contained HTML pages for saved runs: one run, a comparison, a spec's history.

Every page is one file with its CSS, JavaScript and charts inline (no network), rendered by
Jinja2 with autoescaping on. Attempt details travel as gzip-compressed, base64-encoded JSON
inside ``<script type="application/gzip">``, unpacked by the browser after the page has
loaded and turned into DOM only when a person opens them.
The page functions live in :mod:`caliper.report.html.pages`; importing this package alone
imports nothing heavy (Jinja2 loads with ``pages``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["baseline_page", "compare_page", "history_page", "run_page"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from caliper.report.html import pages

        return getattr(pages, name)
    raise AttributeError(name)
