"""The ``--confidence`` option shared by ``run``, ``report`` and ``compare``."""

from __future__ import annotations

import math

import click

DEFAULT_CONFIDENCE = 0.95  # the same as caliper.results.stats.DEFAULT_CONFIDENCE


class ConfidenceLevel(click.ParamType):
    """A confidence level strictly between 0 and 1 (``0.95``); ``0``, ``1``, ``1.5`` and
    ``nan`` are usage errors (exit 2)."""

    name = "level"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None):
        """``value`` as a float in (0, 1), or a usage error naming what was given."""
        if isinstance(value, float) and 0.0 < value < 1.0:
            return value
        try:
            level = float(value)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not a number; give a level such as 0.95.", param, ctx)
        if math.isnan(level) or not 0.0 < level < 1.0:
            self.fail(
                f"{value!r} is not a confidence level: it must lie strictly between 0 and 1 "
                "(e.g. 0.9, 0.95, 0.99).",
                param,
                ctx,
            )
        return level


def confidence_option(func):
    """Decorate a click command with ``--confidence LEVEL`` (default 0.95)."""
    return click.option(
        "--confidence",
        type=ConfidenceLevel(),
        default=DEFAULT_CONFIDENCE,
        show_default=True,
        help="Confidence level of the intervals shown; compare also tests at the "
        "significance level 1 − LEVEL.",
    )(func)
