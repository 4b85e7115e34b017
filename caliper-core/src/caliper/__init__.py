"""Caliper: measure whether an agent skill really works, through real coding-agent CLIs.

Importing this package is cheap on purpose: it exposes the version and the pluggy
``hookimpl`` marker plugins decorate their hook implementations with.
"""

from __future__ import annotations

import pluggy

__version__ = "1.0.0"

PROJECT_NAME = "caliper"

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marker for plugin hook implementations: ``@caliper.hookimpl``."""

__all__ = ["PROJECT_NAME", "__version__", "hookimpl"]
