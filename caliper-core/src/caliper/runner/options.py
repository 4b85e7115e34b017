"""What ``caliper run`` was asked to do, as one immutable value."""

from __future__ import annotations

from pathlib import Path

import attrs

from caliper.results.compact import DEFAULT_MAX_ATTEMPT_CHARS, DEFAULT_MAX_TURN_CHARS

DEFAULT_K = 3
DEFAULT_WORKERS = 4
DEFAULT_TIMEOUT = 120.0
DEFAULT_SETUP_TIMEOUT = 60.0


@attrs.frozen
class RunOptions:
    """The run's settings (the ``caliper run`` flags, after click parsed them)."""

    spec_path: Path
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
    max_turn_chars: int = DEFAULT_MAX_TURN_CHARS
    max_attempt_chars: int = DEFAULT_MAX_ATTEMPT_CHARS
