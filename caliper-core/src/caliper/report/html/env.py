"""The Jinja2 environment the pages are rendered with (autoescaping on, strict undefined)."""

from __future__ import annotations

import functools
import secrets
from importlib import resources

import jinja2
from markupsafe import Markup

from caliper.report import fmt
from caliper.report.html.safe_json import packed_json, script_json
from caliper.report.html.svg import interval_bar


def static_text(name: str) -> str:
    """The text of ``static/<name>`` (CSS or JavaScript inlined into every page)."""
    return resources.files("caliper.report.html").joinpath("static", name).read_text("utf-8")


def interval_text(interval: dict | None) -> str:
    """``[42.0–88.1%]`` for an interval dict, ``""`` for none."""
    if not interval:
        return ""
    return f"[{interval['low'] * 100:.1f}–{interval['high'] * 100:.1f}%]"


def _ibar(value: float | None, interval: dict | None, label: str = "") -> Markup:
    low = interval["low"] if interval else None
    high = interval["high"] if interval else None
    return interval_bar(value, low, high, label=label)


def _inline_script(name: str) -> Markup:
    # Our own files: a literal "</script" in them would end the element early.
    text = static_text(name)
    if "</script" in text.lower():
        raise ValueError(f"static/{name} contains '</script', which would break the page")
    return Markup(text)


@functools.cache
def environment() -> jinja2.Environment:
    """The shared environment (templates are package data under ``templates/``)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("caliper.report.html", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        pct=fmt.pct,
        signed_pct=fmt.signed_pct,
        tokens=fmt.tokens,
        duration=fmt.duration,
        interval_text=interval_text,
        script_json=lambda data: Markup(script_json(data)),
        packed_json=lambda data: Markup(packed_json(data)),
    )
    env.globals.update(
        ibar=_ibar,
        css=lambda name: Markup(static_text(name)),
        js=_inline_script,
    )
    return env


def render(template: str, **context: object) -> str:
    """Render ``templates/<template>`` with ``context`` and a fresh CSP nonce."""
    nonce = secrets.token_urlsafe(16)
    return environment().get_template(template).render(nonce=nonce, **context)
