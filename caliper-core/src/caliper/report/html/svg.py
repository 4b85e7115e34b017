"""A tiny inline-SVG helper: interval bars and time charts with interval bands.

Why hand-written SVG and not a charting library: the pages need two shapes (a rate with its
interval on a 0–100 % track, and a line over runs with a band), both a few dozen lines of
markup; a Python charting library would add a heavy dependency and a JS one would add
hundreds of kilobytes to every page. Every piece of text that goes into the markup passes
through :func:`html.escape`, so a label can never become markup.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

from markupsafe import Markup

from caliper.system import attrs_classes

PASS_COLOUR = "#2e7d32"
BAND_COLOUR = "#90caf9"
LINE_COLOUR = "#1565c0"
GRID_COLOUR = "#d0d7de"
MAX_X_LABELS = 8


def _num(value: float) -> str:
    """A coordinate with at most two decimals and no trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _clamp(value: float) -> float:
    return max(0.0, min(1.0, value))


def esc(text: object) -> str:
    """``text`` escaped for SVG/HTML text and attribute values (quotes included)."""
    return html.escape(str(text), quote=True)


def interval_bar(
    value: float | None,
    low: float | None = None,
    high: float | None = None,
    *,
    width: int = 120,
    height: int = 12,
    label: str = "",
) -> Markup:
    """A 0–100 % track with the interval ``[low, high]`` shaded and a tick at ``value``.

    ``value`` ``None`` draws an empty track. ``label`` becomes the SVG's ``<title>`` (a
    tooltip and the accessible name).
    """
    parts = [
        f'<svg class="ibar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{esc(label)}">',
        f"<title>{esc(label)}</title>" if label else "",
        f'<rect x="0" y="{_num(height / 2 - 1)}" width="{width}" height="2" fill="{GRID_COLOUR}"/>',
    ]
    if low is not None and high is not None:
        x0, x1 = _clamp(low) * width, _clamp(high) * width
        parts.append(
            f'<rect class="band" x="{_num(x0)}" y="1" width="{_num(max(x1 - x0, 1.0))}" '
            f'height="{height - 2}" rx="2" fill="{BAND_COLOUR}"/>'
        )
    if value is not None:
        x = _clamp(value) * width
        x = min(max(x, 1.0), width - 1.0)
        parts.append(
            f'<rect class="point" x="{_num(x - 1)}" y="0" width="2" height="{height}" '
            f'fill="{LINE_COLOUR}"/>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


@attrs_classes.frozen
class ChartPoint:
    """One run on a history chart: its rate, interval, link and how it is marked."""

    value: float | None
    low: float | None
    high: float | None
    title: str
    href: str | None = None
    colour: str = LINE_COLOUR
    hollow: bool = False
    label: str = ""


def _band_path(coords: Sequence[tuple[float, float, float]]) -> str:
    """An SVG path through the highs left to right and back through the lows."""
    top = [f"{_num(x)},{_num(hi)}" for x, _lo, hi in coords]
    bottom = [f"{_num(x)},{_num(lo)}" for x, lo, _hi in reversed(coords)]
    return "M" + " L".join(top + bottom) + " Z"


def time_chart(
    points: Sequence[ChartPoint], *, width: int = 720, height: int = 200, label: str = ""
) -> Markup:
    """Runs left to right (oldest first) on a 0–100 % axis: a band for the intervals, a line
    through the rates and a dot per run (a link when ``href`` is set; hollow when ablated).

    Runs without a rate get no dot; the band and the line break around them.
    """
    pad_left, pad_right, pad_top, pad_bottom = 40, 40, 10, 22
    inner_w = width - pad_left - pad_right
    inner_h = height - pad_top - pad_bottom
    n = len(points)

    def x_of(i: int) -> float:
        return pad_left + (inner_w / 2 if n == 1 else i * inner_w / (n - 1))

    def y_of(v: float) -> float:
        return pad_top + (1.0 - _clamp(v)) * inner_h

    parts = [
        f'<svg class="chart" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{esc(label)}">',
        f"<title>{esc(label)}</title>" if label else "",
    ]
    for tick in (0.0, 0.5, 1.0):
        y = _num(y_of(tick))
        parts.append(
            f'<line x1="{pad_left}" y1="{y}" x2="{width - pad_right}" y2="{y}" '
            f'stroke="{GRID_COLOUR}"/>'
            f'<text x="{pad_left - 6}" y="{y}" dy="4" text-anchor="end" '
            f'font-size="11">{int(tick * 100)}%</text>'
        )
    every = max(1, math.ceil(n / MAX_X_LABELS))
    for i, point in enumerate(points):
        if point.label and i % every == 0:
            parts.append(
                f'<text class="x-label" x="{_num(x_of(i))}" y="{height - 4}" '
                f'text-anchor="middle" font-size="10">{esc(point.label)}</text>'
            )
    segments: list[list[int]] = [[]]
    for i, point in enumerate(points):
        if point.value is None:
            segments.append([])
        else:
            segments[-1].append(i)
    for segment in segments:
        banded = [i for i in segment if points[i].low is not None and points[i].high is not None]
        if len(banded) >= 2:
            coords = [(x_of(i), y_of(points[i].low), y_of(points[i].high)) for i in banded]
            parts.append(
                f'<path class="band" d="{_band_path(coords)}" fill="{BAND_COLOUR}" '
                'fill-opacity="0.45" stroke="none"/>'
            )
        elif len(banded) == 1:
            i = banded[0]
            parts.append(
                f'<line class="band" x1="{_num(x_of(i))}" y1="{_num(y_of(points[i].low))}" '
                f'x2="{_num(x_of(i))}" y2="{_num(y_of(points[i].high))}" '
                f'stroke="{BAND_COLOUR}" stroke-width="8"/>'
            )
        if len(segment) >= 2:
            line = " ".join(f"{_num(x_of(i))},{_num(y_of(points[i].value))}" for i in segment)
            parts.append(
                f'<polyline class="line" points="{line}" fill="none" '
                f'stroke="{LINE_COLOUR}" stroke-width="1.5"/>'
            )
    for i, point in enumerate(points):
        if point.value is None:
            continue
        fill = "#ffffff" if point.hollow else point.colour
        dot = (
            f'<circle class="dot" cx="{_num(x_of(i))}" cy="{_num(y_of(point.value))}" r="5" '
            f'fill="{fill}" stroke="{point.colour}" stroke-width="2">'
            f"<title>{esc(point.title)}</title></circle>"
        )
        if point.href:
            dot = f'<a class="run-link" href="{esc(point.href)}">{dot}</a>'
        parts.append(dot)
    parts.append("</svg>")
    return Markup("".join(parts))
