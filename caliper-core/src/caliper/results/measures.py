"""The names of the measured metrics and how their values are written (``90%``, ``$0.0123``,
``12.5s``): shared by the gate (:mod:`caliper.results.gate`) and the report's views, which draw
them without importing the gate."""

from __future__ import annotations

SCORE = "score"
ACTIVATION = "activation"
COST = "cost"
DURATION = "duration"


def format_fraction(value: float) -> str:
    """``0.9`` → ``90%``, ``0.875`` → ``87.5%``."""
    text = f"{value * 100:.1f}".rstrip("0").rstrip(".")
    return f"{text}%"


def format_number(value: float) -> str:
    """``0.9`` → ``0.9``, ``1.0`` → ``1``."""
    return f"{value:g}"


def format_measure(metric: str, value: float) -> str:
    """A bar's value in its unit: ``80%`` (rates), ``$0.0123`` (cost), ``12.5s`` (time)."""
    if metric == COST:
        return f"${value:.4g}" if value < 1 else f"${value:,.2f}"
    if metric == DURATION:
        return f"{value:.3g}s" if value < 100 else f"{value:,.0f}s"
    return format_fraction(value)
