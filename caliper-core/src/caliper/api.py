"""Running Caliper in-process: :func:`caliper.run`.

For tests and plugin authors, like pytest's ``pytester.inline_run``: run a spec in this
process with plugin objects passed in directly (modules or instances with
``@caliper.hookimpl`` functions), without installing them as distributions::

    import caliper
    from caliper.runner import RunOptions

    ending = caliper.run("hello.eval.yaml", RunOptions(k=2), plugins=[my_backend_plugin])
    assert ending.exit_code == 0
    ending.results.tasks[0].attempts

It goes through the same steps as ``caliper run`` (pre-flight, plan, schedule on the chosen
executor, journal, assemble, save under ``.caliper/``) and returns the
:class:`~caliper.runner.RunEnding` instead of printing a report and exiting.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from caliper.host.plugins import PluginHost
from caliper.runner import RunOptions, run_spec

if TYPE_CHECKING:
    from rich.console import Console

    from caliper.runner import RunEnding


def run(
    spec: str | Path,
    options: RunOptions | None = None,
    *,
    plugins: Iterable[Any] = (),
    entry_points: bool = True,
    progress_console: Console | None = None,
) -> RunEnding:
    """Run ``spec`` in this process and return how the run ended.

    ``options`` are the ``caliper run`` settings (:class:`caliper.runner.RunOptions`; its
    ``spec_path`` is replaced by ``spec``; default: all defaults). ``plugins`` are registered
    before any installed plugin; with ``entry_points=False`` installed plugins are not loaded
    at all, so only ``plugins`` (and the built-in ``local`` executor) are available — pass
    :mod:`caliper.default_plugins.assert_judge` too when the spec uses ``assert:``.

    Problems found before the first attempt raise :class:`caliper.errors.CaliperError`
    (``exit_code`` says what ``caliper run`` would exit with); what happened after that is in
    the returned :class:`~caliper.runner.RunEnding` (``exit_code``, ``problem()``). Signals
    are handled as by ``caliper run`` only when called from the main thread.
    """
    path = Path(spec)
    options = (
        RunOptions(spec_path=path) if options is None else attrs.evolve(options, spec_path=path)
    )
    host = PluginHost(plugins, use_entry_points=entry_points)
    return run_spec(options, host=host, progress_console=progress_console)
