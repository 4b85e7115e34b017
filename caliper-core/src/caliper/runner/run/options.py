"""What ``caliper run`` was asked to do, as immutable values.

:class:`RunOptions` holds every flag, as the command line (and :func:`caliper.run`) gives
them. The orchestration reads two kinds of setting out of it: per engine (``k``, timeouts,
``--fail-fast``, retries, ... what each engine's plan, attempts and saved run use, read from
that engine's own ``RunOptions``), and run-level (:class:`RunSettings`: where the attempts run
and how many at once, the same for every engine of a matrix, since all engines share one
executor session), taken once with :meth:`RunOptions.run_level`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from caliper.errors import UsageError
from caliper.results.compact import DEFAULT_MAX_ATTEMPT_CHARS, DEFAULT_MAX_TURN_CHARS
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.runner.adaptive import AdaptiveSettings
    from caliper.runner.shard import Shard

DEFAULT_K = 3
DEFAULT_WORKERS = 4
DEFAULT_TIMEOUT = 120.0
DEFAULT_SETUP_TIMEOUT = 60.0
DEFAULT_RETRIES = 2


@attrs_classes.frozen
class RunOptions:
    """The run's settings (the ``caliper run`` flags, after click parsed them)."""

    spec_path: Path = Path()
    """The spec file (``caliper.run(spec, options)`` fills it in)."""
    k: int = DEFAULT_K
    workers: int = DEFAULT_WORKERS
    timeout: float = DEFAULT_TIMEOUT
    setup_timeout: float = DEFAULT_SETUP_TIMEOUT
    ablate: tuple[str, ...] = ()
    fail_fast: int = 0
    model: str | None = None
    judge_model: str | None = None
    output: Path | None = None
    verbose: bool = False
    user_customizations: bool | None = None
    """``--user-customizations`` (True) / ``--no-user-customizations`` (False); ``None``: the
    spec's ``user_customizations:`` decides (default off: attempts stay isolated)."""
    judge_timeout: float | None = None
    """``--judge-timeout`` (or ``CALIPER_JUDGE_TIMEOUT``); ``None``: the attempt's ``timeout``."""
    max_turn_chars: int = DEFAULT_MAX_TURN_CHARS
    max_attempt_chars: int = DEFAULT_MAX_ATTEMPT_CHARS
    retries: int = DEFAULT_RETRIES
    """``--retries``: more tries an attempt gets after a transient failure (see ``.retry``)."""
    timeouts: str = "failure"
    """``--timeouts``: ``failure`` (a timed-out attempt counts as failed) or ``unusable``
    (left out of the rates); saved as ``RunMeta.timeouts``."""
    keep_workdirs: bool = False
    """``--keep-workdirs``: archive each attempt's final working directory (``.workdirs``)."""
    adaptive: AdaptiveSettings | None = None
    """``--k auto``: adaptive k (``k`` is then ``--max-k``); see :mod:`.adaptive`."""
    workdir_max_bytes: int = 50 * 1024 * 1024
    """``--workdir-max-bytes``: at most this many bytes of files kept per attempt."""
    workdirs_max_bytes: int = 500 * 1024 * 1024
    """``--workdirs-max-bytes``: at most this many bytes of files kept for the whole run."""
    results_root: Path | None = None
    """The ``.caliper/`` folder to save in, when the caller already found it (``caliper run``
    does, once, before checking it is writable); ``None``: found once when the run starts."""
    executor: str = "local"
    """``--executor``: the id of the executor the attempts run on (see
    ``caliper.plugin.executor``)."""
    executor_settings: Mapping[str, str] = attrs.field(factory=dict)
    """The executor's ``--<id>-<name> VALUE`` settings, by name."""
    max_concurrent: Mapping[str, int] = attrs.field(factory=dict)
    """``--max-concurrent BACKEND=N``: at most N attempts of that backend at once."""
    shard: Shard | None = None
    """``--shard I/N``: run only this shard's slice of the attempts (see :mod:`.shard`)."""
    max_cost: float | None = None
    """``--max-cost USD``: no attempt is started once the attempts' reported cost reaches it."""

    @property
    def judge_seconds(self) -> float:
        """Seconds one judge call (``assert:``, ``expect:``, …) may take."""
        return self.judge_timeout if self.judge_timeout is not None else self.timeout

    def run_level(self) -> RunSettings:
        """The run-level settings among these options (see :class:`RunSettings`)."""
        return RunSettings(
            executor=self.executor,
            executor_settings=self.executor_settings,
            workers=self.workers,
            max_concurrent=self.max_concurrent,
            max_cost=self.max_cost,
        )


@attrs_classes.frozen
class RunSettings:
    """The settings of a whole run, the same for every engine of it: the one executor session
    all engines' attempts go to, and its limits (per-engine settings stay in each engine's
    :class:`RunOptions`)."""

    executor: str = "local"
    """``--executor``: the id of the executor the attempts run on."""
    executor_settings: Mapping[str, str] = attrs.field(factory=dict)
    """The executor's ``--<id>-<name> VALUE`` settings, by name."""
    workers: int = DEFAULT_WORKERS
    """``--workers``: how many attempts run at once, over all engines."""
    max_concurrent: Mapping[str, int] = attrs.field(factory=dict)
    """``--max-concurrent BACKEND=N``: at most N attempts of that backend at once."""
    max_cost: float | None = None
    """``--max-cost USD``: the budget of the whole run (every engine's attempts), in the cost
    the agent CLIs report; no attempt is started once it is reached."""


JUDGE_TIMEOUT_VARIABLE = "CALIPER_JUDGE_TIMEOUT"


def judge_timeout_from_env(environ: Mapping[str, str] | None = None) -> float | None:
    """``CALIPER_JUDGE_TIMEOUT`` as seconds, ``None`` when unset or blank.

    Raises :class:`~caliper.errors.UsageError` (exit 2) for anything but a finite number of
    seconds above zero (``0`` or ``inf`` would otherwise quietly mean "wait for ever").
    """
    raw = (os.environ if environ is None else environ).get(JUDGE_TIMEOUT_VARIABLE, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise UsageError(
            f"{JUDGE_TIMEOUT_VARIABLE}={raw!r} is not a number of seconds greater than 0.",
            hint="Set it to e.g. 300, or unset it to give judges the --timeout budget "
            "(or pass --judge-timeout).",
        )
    return value
