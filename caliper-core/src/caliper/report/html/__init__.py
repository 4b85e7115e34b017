"""Self-contained HTML pages for saved runs: one run, a comparison, a spec's history.

Every page is one file with its CSS, JavaScript and charts inline (no network), rendered by
Jinja2 with autoescaping on. Attempt details travel as JSON inside
``<script type="application/json">`` and are turned into DOM only when a person opens them.
Import this package lazily: it pulls in Jinja2.
"""

from __future__ import annotations

from caliper.report.html.pages import compare_page, history_page, run_page

__all__ = ["compare_page", "history_page", "run_page"]
