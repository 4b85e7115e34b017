"""Caliper plugin module for Ray: registers the ``ray`` executor.

Ray itself is imported only when a run starts on it (:meth:`RayExecutor.start`), so listing
plugins or ``caliper --help`` never pays for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import caliper

if TYPE_CHECKING:
    from caliper.plugin.executor import Executor


@caliper.hookimpl
def register_executors(register: Callable[[Executor], None]) -> None:
    """Register the ``ray`` executor (``caliper run --executor ray``)."""
    from caliper_executor_ray.executor import RayExecutor

    register(RayExecutor())
