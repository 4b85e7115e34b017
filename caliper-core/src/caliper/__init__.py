"""Caliper: measure whether an agent skill really works, through real coding-agent CLIs.

Importing this package is cheap on purpose: it holds the version and a small table of names
imported only when first used (``_LAZY``), such as the pluggy ``hookimpl`` marker plugins
decorate their hook implementations with (``@caliper.hookimpl``) and ``caliper.run`` (in-process
runs, :mod:`caliper.api`). ``caliper --help`` and
``caliper validate`` thus never import what they do not use.
"""

from __future__ import annotations

import importlib

from caliper import _relocated

__version__ = "1.0.0"

PROJECT_NAME = "caliper"

_LAZY: dict[str, tuple[str, str]] = {
    # public name: (module, attribute), imported on first use and then kept here
    "hookimpl": ("caliper.plugin.markers", "hookimpl"),
    "run": ("caliper.api", "run"),
}

__all__ = ["PROJECT_NAME", "__version__", *_LAZY]

_relocated.install()  # old module paths (``caliper.system.process``...) keep working until 2.0


def __getattr__(name: str) -> object:
    """A name of ``_LAZY``, imported on first use (then a plain module attribute)."""
    try:
        module, attribute = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the lazy ones included."""
    return sorted({*globals(), *_LAZY})
