"""The pluggy marker plugins decorate their hook implementations with (``@caliper.hookimpl``).

Its own module so that importing :mod:`caliper` does not import pluggy: ``caliper.hookimpl``
is looked up here on first use (see ``caliper._LAZY``).
"""

from __future__ import annotations

import pluggy

from caliper import PROJECT_NAME

hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
"""Marker for plugin hook implementations: ``@caliper.hookimpl``."""
