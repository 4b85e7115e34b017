"""The marker plugins decorate their hook implementations with (``@caliper.hookimpl``).

It marks a function exactly as ``pluggy.HookimplMarker("caliper")`` does (the options dict
pluggy reads, in the ``caliper_impl`` attribute) without importing pluggy, so loading a plugin
module costs nothing more than the module: ``caliper validate`` imports the judge plugins and
calls their hook directly (:mod:`caliper.host.direct_judges`), and pluggy is imported only where
plugins are registered with it (:func:`caliper.host.plugins.make_plugin_manager`).
``tests/core/test_markers.py`` checks that the two markers mark alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

from caliper import PROJECT_NAME

_F = TypeVar("_F", bound=Callable[..., Any])

IMPL_ATTRIBUTE = PROJECT_NAME + "_impl"
"""The attribute holding a hook implementation's options (pluggy's ``<project>_impl``)."""


class HookimplMarker:
    """pluggy's ``HookimplMarker`` for one project, without pluggy: ``@marker`` or
    ``@marker(tryfirst=True, ...)`` with pluggy's options and defaults."""

    def __init__(self, project_name: str) -> None:
        self.project_name = project_name

    @overload
    def __call__(
        self,
        function: _F,
        hookwrapper: bool = ...,
        optionalhook: bool = ...,
        tryfirst: bool = ...,
        trylast: bool = ...,
        specname: str | None = ...,
        wrapper: bool = ...,
    ) -> _F: ...

    @overload
    def __call__(
        self,
        function: None = ...,
        hookwrapper: bool = ...,
        optionalhook: bool = ...,
        tryfirst: bool = ...,
        trylast: bool = ...,
        specname: str | None = ...,
        wrapper: bool = ...,
    ) -> Callable[[_F], _F]: ...

    def __call__(
        self,
        function: _F | None = None,
        hookwrapper: bool = False,
        optionalhook: bool = False,
        tryfirst: bool = False,
        trylast: bool = False,
        specname: str | None = None,
        wrapper: bool = False,
    ) -> _F | Callable[[_F], _F]:
        """Mark ``function`` (or, called with options only, return the decorator)."""

        def mark(func: _F) -> _F:
            opts = {
                "wrapper": wrapper,
                "hookwrapper": hookwrapper,
                "optionalhook": optionalhook,
                "tryfirst": tryfirst,
                "trylast": trylast,
                "specname": specname,
            }
            setattr(func, self.project_name + "_impl", opts)
            return func

        return mark if function is None else mark(function)


hookimpl = HookimplMarker(PROJECT_NAME)
"""Marker for plugin hook implementations: ``@caliper.hookimpl``."""
