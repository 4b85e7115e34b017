"""Many engines in one run: ``caliper run SPEC --model A --model B …``.

:func:`run_matrix` runs the spec on every engine from one invocation: the many-engine case of
the one orchestration, :func:`caliper.runner.run.compose.run_engines`. Each engine is prepared
(every pre-flight check) before any attempt starts, so a missing CLI for one engine stops the
whole matrix with one message; then all engines' attempts go to **one** executor session (one
pool of ``--workers``, per-backend ``--max-concurrent`` limits), interleaved so no engine waits
for another to finish. Each engine gets its own journal and saved run, exactly like a run of
that engine alone, tied to the others by ``meta.matrix`` (the same ``id``, this run's
``engine`` and the list of ``engines``). ``--judge-model`` applies to every engine; without it
each engine's judges follow that engine (:func:`caliper.runner.judge_engine_for`).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING

from caliper.errors import UsageError
from caliper.results.store import new_run_id
from caliper.runner.run.compose import Tie, run_engines
from caliper.runner.run.plan import interleave
from caliper.spec.model import spec_name_for
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from rich.console import Console

    from caliper.host.plugins import PluginHost
    from caliper.runner.run.ending import RunEnding
    from caliper.runner.run.options import RunOptions

__all__ = ["MatrixEnding", "engine_keys", "interleave", "new_matrix_id", "run_matrix"]


@attrs_classes.frozen
class MatrixEnding:
    """A finished (or stopped) matrix: the matrix id and one :class:`RunEnding` per engine."""

    matrix_id: str
    engines: list[str]
    reports: list[RunEnding]

    @property
    def exit_code(self) -> int:
        """The worst over the engines' runs: the highest of their exit codes (a signal's
        ``128 + N`` above everything, then ``3`` setup, ``2`` usage, ``1`` all unusable)."""
        return max((report.exit_code for report in self.reports), default=0)


def new_matrix_id() -> str:
    """A matrix id: the UTC start time, as run ids are, plus 6 random hex digits."""
    return f"{new_run_id()}-{secrets.token_hex(3)}"


def engine_keys(models: Sequence[str]) -> list[str]:
    """The engines' names in the matrix: each ``--model`` as given (twice is refused)."""
    keys = [model.strip() for model in models]
    twice = sorted({key for key in keys if keys.count(key) > 1})
    if twice:
        raise UsageError(
            f"--model {twice[0]} is given twice.",
            hint="Name each engine of a matrix once.",
        )
    if any(not key for key in keys):
        raise UsageError("--model '' names no engine.", hint="Write e.g. --model codex:gpt-5.5.")
    return keys


def run_matrix(
    options: Sequence[RunOptions],
    *,
    host: PluginHost | None = None,
    progress_console: Console | None = None,
) -> MatrixEnding:
    """Run the spec once per ``options`` (one per engine, differing only in ``model``) in one
    pool, and save one run per engine; see :class:`MatrixEnding` for the exit code.

    The many-engine case of :func:`caliper.runner.run.compose.run_engines`, keyed by each
    ``--model`` as given. Raises :class:`CaliperError` subclasses for problems found before
    the first attempt.
    """
    keys = engine_keys([opts.model or "" for opts in options])
    matrix_id = new_matrix_id()
    tie = Tie(
        notes={key: {"matrix": {"id": matrix_id, "engine": key, "engines": keys}} for key in keys},
        title=f"caliper run {spec_name_for(options[0].spec_path)} on {len(keys)} engines "
        f"(matrix {matrix_id})",
    )
    endings = run_engines(
        dict(zip(keys, options, strict=True)),
        options[0].run_level(),  # the options differ only in model
        host=host,
        progress_console=progress_console,
        tie=tie,
    )
    return MatrixEnding(matrix_id=matrix_id, engines=keys, reports=[endings[k] for k in keys])
