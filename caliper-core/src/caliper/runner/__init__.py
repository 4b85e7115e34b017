"""The runner: from a spec file to a saved run (``caliper run``).

Every run goes through one orchestration, :func:`caliper.runner.run.compose.run_engines`, over a
set of engine keys; :func:`run_spec` is its one-engine case (key ``""``) and
:func:`caliper.runner.matrix.run_matrix` its many-engine case. The steps, each owned by one
module (see ``docs/architecture.md``): pre-flight checks (:mod:`.prepare`) → plan
(:mod:`.plan`, pure) → schedule (:mod:`.schedule`) through an executor
(:mod:`caliper.plugin.executor`; ``local`` by default), each job running the attempt pipeline
(:mod:`.attempt_pipeline`) → journal each finished attempt (:mod:`.journaling`) → assemble the
results (:mod:`.assemble`, pure) and save them → :class:`RunEnding`, which decides the exit
code (:mod:`.ending`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from caliper.runner.attempt.judge_calls import judge_engine_for as judge_engine_for  # re-exported
from caliper.runner.run.ending import EXIT_ALL_UNUSABLE, EXIT_INTERRUPTED, EXIT_OK, RunEnding
from caliper.runner.run.options import RunOptions

if TYPE_CHECKING:
    from rich.console import Console

    from caliper.host.plugins import PluginHost
    from caliper.runner.run.plan import Continuation

__all__ = [
    "EXIT_ALL_UNUSABLE",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "RunEnding",
    "RunOptions",
    "run_spec",
]


def run_spec(
    options: RunOptions,
    *,
    host: PluginHost | None = None,
    progress_console: Console | None = None,
    continuation: Continuation | None = None,
    warm_up: Callable[[], None] | None = None,
) -> RunEnding:
    """Run ``options.spec_path`` and save the results; :class:`RunEnding` says how it ended.

    ``continuation`` resumes a saved run (same id, only its missing attempts) or retries one
    (a new run; see :mod:`.plan`). Every finished attempt goes to the run's journal at once;
    the results file is assembled from it at the end.

    ``warm_up`` is called while the first attempts run (the run command imports what its
    final report needs there).

    Raises :class:`~caliper.errors.CaliperError` subclasses for problems found before the
    first attempt.
    """
    from caliper.runner.run.compose import run_engines

    endings = run_engines(
        {"": options},
        options.run_level(),
        host=host,
        progress_console=progress_console,
        continuation=continuation,
        warm_up=warm_up,
    )
    return endings[""]
