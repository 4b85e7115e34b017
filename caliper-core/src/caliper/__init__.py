"""Caliper: measure whether an agent skill really works, through real coding-agent CLIs.

Importing this package is cheap on purpose: it exposes the version, the pluggy ``hookimpl``
marker plugins decorate their hook implementations with, and ``caliper.run`` (in-process runs,
:mod:`caliper.api`), which is imported only when first used.
"""

from __future__ import annotations

import pluggy

__version__ = "1.0.0"

PROJECT_NAME = "caliper"

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marker for plugin hook implementations: ``@caliper.hookimpl``."""

__all__ = ["PROJECT_NAME", "__version__", "hookimpl", "run"]


def __getattr__(name: str) -> object:
    """``caliper.run`` (:func:`caliper.api.run`), imported only when first used."""
    if name == "run":
        from caliper.api import run

        return run
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
