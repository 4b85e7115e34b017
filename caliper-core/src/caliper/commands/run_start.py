"""From ``caliper run``'s flags to a run: :class:`RunFlags` holds what click parsed,
:func:`start_run` turns it into :class:`~caliper.runner.RunOptions` (with ``--resume``,
``--k auto`` and ``--shard`` worked out, and every check that can fail before an attempt
done first) and hands it to one run, a matrix (several ``--model``) or a baseline
(``--baseline``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from caliper.cli import resume_collector
from caliper.commands.executor_options import settings_from
from caliper.commands.finishing import finish_report
from caliper.commands.gate_options import check_bars_before_run, check_junit_target
from caliper.commands.run_matrix import run_and_finish_matrix, split_models
from caliper.commands.run_setup import (
    adaptive_settings,
    check_save_targets,
    import_the_report,
    results_root,
    resumed,
    shard_of,
)
from caliper.errors import UsageError
from caliper.results.compact import DEFAULT_MAX_ATTEMPT_CHARS, DEFAULT_MAX_TURN_CHARS
from caliper.runner import RunOptions, run_spec
from caliper.runner.run.executors import parse_max_concurrent
from caliper.runner.run.options import (
    DEFAULT_K,
    DEFAULT_RETRIES,
    DEFAULT_SETUP_TIMEOUT,
    DEFAULT_TIMEOUT,
    DEFAULT_WORKERS,
    judge_timeout_from_env,
)
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.commands.run_baseline import BaselineRequest
    from caliper.results.gate import Bar
    from caliper.runner.run.options import RunOptions
    from caliper.runner.run.plan import Continuation

SPEC_SUFFIXES = (".yaml", ".yml")


@attrs_classes.frozen
class RunFlags:
    """``caliper run``'s flags as click parsed them (``executor_flags``: the executors'
    own ``--<id>-<name>`` flags, by click's parameter name)."""

    spec: Path
    k: int | str | None = None
    max_k: int | None = None
    min_k: int | None = None
    margin: float | None = None
    precision: float | None = None
    workers: int = DEFAULT_WORKERS
    timeout: float = DEFAULT_TIMEOUT
    setup_timeout: float = DEFAULT_SETUP_TIMEOUT
    judge_timeout: float | None = None
    ablate: tuple[str, ...] = ()
    fail_fast: int = 0
    model: tuple[str, ...] | str | None = None
    judge_model: str | None = None
    user_customizations: bool | None = None
    output: Path | None = None
    verbose: bool = False
    confidence: float = 0.95
    max_turn_chars: int = DEFAULT_MAX_TURN_CHARS
    max_attempt_chars: int = DEFAULT_MAX_ATTEMPT_CHARS
    min_score: tuple[Bar, ...] = ()
    min_activation: tuple[Bar, ...] = ()
    max_cost_per_attempt: tuple[Bar, ...] = ()
    max_duration: tuple[Bar, ...] = ()
    inconclusive: str = "fail"
    junit: Path | None = None
    retries: int = DEFAULT_RETRIES
    timeouts: str | None = None
    keep_workdirs: bool = False
    workdir_max_bytes: int = 50 * 1024 * 1024
    workdirs_max_bytes: int = 500 * 1024 * 1024
    resume: str | None = None
    force: bool = False
    shard_text: str | None = None
    max_cost: float | None = None
    baseline: tuple[str, ...] = ()
    require_improvement: bool = False
    min_lift: float | None = None
    fail_on: str = "score"
    output_format: str = "text"
    page: Path | None = None
    executor: str = "local"
    max_concurrent: tuple[str, ...] = ()
    executor_flags: Mapping[str, str | None] = attrs.field(factory=dict)

    @classmethod
    def from_click(cls, spec: Path | None, flags: Mapping[str, Any]) -> RunFlags:
        """The flags of one ``caliper run``; a SPEC that click took as ``--baseline``'s
        value (``--baseline my.eval.yaml``) is given back to SPEC."""
        known = {field.name for field in attrs.fields(cls)}
        given = {name: value for name, value in flags.items() if name in known}
        executor_flags = {name: value for name, value in flags.items() if name not in known}
        baseline = tuple(given.pop("baseline", ()) or ())
        if spec is None:
            spec, baseline = _spec_from_baseline(baseline)
        return cls(spec=spec, baseline=baseline, executor_flags=executor_flags, **given)

    @property
    def baseline_asked(self) -> bool:
        """Whether ``--baseline`` was given (with or without names)."""
        return bool(self.baseline)

    @property
    def bars(self) -> tuple[Bar, ...]:
        """Every ``--min-score``, ``--min-activation``, ``--max-cost-per-attempt`` and
        ``--max-duration`` bar."""
        return (
            *self.min_score,
            *self.min_activation,
            *self.max_cost_per_attempt,
            *self.max_duration,
        )


def _spec_from_baseline(baseline: tuple[str, ...]) -> tuple[Path, tuple[str, ...]]:
    """SPEC when click took it as the last ``--baseline`` value, else the usual error."""
    if baseline and baseline[-1].endswith(SPEC_SUFFIXES) and Path(baseline[-1]).is_file():
        return Path(baseline[-1]), (*baseline[:-1], "")
    raise UsageError(
        "Missing argument 'SPEC'.",
        hint="Try `caliper run my-skill.eval.yaml` (with --baseline, write it after SPEC or "
        "as --baseline=NAME).",
    )


def start_run(flags: RunFlags) -> None:
    """Run what ``flags`` ask for and leave with its exit (see ``caliper run --help``)."""
    baseline = flags.baseline_asked or _resumes_a_pair(flags)
    _check_baseline_flags(flags, baseline)
    model, engines = split_models(
        flags.model,
        resume=flags.resume,
        output=flags.output if not baseline else None,
        junit=flags.junit if not baseline else None,
    )
    options, continuation = run_options(flags, model, baseline=baseline)
    check_save_targets(flags.spec, flags.output, options.results_root)
    check_bars_before_run(flags.spec, flags.bars)
    check_junit_target(flags.junit)
    if baseline:
        _start_baseline(flags, options, engines, continuation)
        return
    if engines:  # many engines in one run
        resume_collector()
        run_and_finish_matrix(
            options, engines, flags.verbose, flags.confidence, flags.bars, flags.inconclusive
        )
        return

    report = run_spec(options, continuation=continuation, warm_up=import_the_report)
    finish_report(
        report,
        flags.verbose,
        flags.output,
        flags.confidence,
        flags.bars,
        flags.inconclusive,
        flags.junit,
    )


def _check_baseline_flags(flags: RunFlags, baseline: bool) -> None:
    """The baseline's own flags only mean something with ``--baseline`` (or the resume of a
    pair): exit 2 otherwise."""
    if baseline:
        return
    used = [
        flag
        for flag, on in (
            ("--require-improvement", flags.require_improvement),
            ("--min-lift", flags.min_lift is not None),
            ("--fail-on", flags.fail_on != "score"),
            ("--format", flags.output_format != "text"),
            ("--page", flags.page is not None),
        )
        if on
    ]
    if used:
        raise UsageError(
            f"{', '.join(used)} only appl{'ies' if len(used) == 1 else 'y'} with --baseline.",
            hint="Add --baseline to run the control arm beside the full one, or drop the flag.",
        )


def _resumes_a_pair(flags: RunFlags) -> bool:
    """Whether ``--resume`` names (or defaults to) an arm of a baseline: then the pair is
    resumed, both arms."""
    if flags.resume is None:
        return False
    from caliper.commands.resume_pair import resumed_run_is_an_arm

    return resumed_run_is_an_arm(flags.spec, flags.resume)


def run_options(
    flags: RunFlags, model: str | None, *, baseline: bool = False
) -> tuple[RunOptions, Continuation | None]:
    """The :class:`RunOptions` of ``flags`` (``--resume`` fills what was not given from the
    saved run; ``--k auto`` sets k to ``--max-k``) and the continuation of a resumed run
    (``None`` for a new run or a resumed baseline, whose pair is found later)."""
    judge_timeout = flags.judge_timeout
    if judge_timeout is None:
        judge_timeout = judge_timeout_from_env()
    adaptive = adaptive_settings(
        flags.k,
        flags.max_k,
        flags.min_k,
        flags.precision,
        flags.min_score,
        flags.confidence,
        margin=flags.margin,
        family=len(flags.min_score) + len(flags.min_activation),
        inconclusive=flags.inconclusive,
        timeouts=flags.timeouts or "failure",
        decides_difference=baseline,
    )
    k = adaptive.max_k if adaptive is not None else flags.k
    root = results_root(flags.spec)  # the one place the results folder is found
    continuation = None
    judge_model, ablate, timeouts = flags.judge_model, flags.ablate, flags.timeouts
    if flags.resume is not None and not baseline:
        continuation, (k, model, judge_model, ablate, timeouts) = resumed(
            flags.spec,
            flags.resume,
            flags.force,
            root,
            adaptive,
            (k, model, judge_model, ablate, timeouts),
        )
    elif flags.force and flags.resume is None:
        raise UsageError("--force only applies with --resume.")
    shard = shard_of(flags.shard_text, adaptive is not None, continuation)
    options = RunOptions(
        shard=shard,
        spec_path=flags.spec,
        k=k if isinstance(k, int) else DEFAULT_K,
        workers=flags.workers,
        timeout=flags.timeout,
        setup_timeout=flags.setup_timeout,
        ablate=tuple(dict.fromkeys(ablate)),
        fail_fast=flags.fail_fast,
        model=model,
        judge_model=judge_model,
        user_customizations=flags.user_customizations,
        output=flags.output,
        verbose=flags.verbose,
        judge_timeout=judge_timeout,
        max_turn_chars=flags.max_turn_chars,
        max_attempt_chars=flags.max_attempt_chars,
        retries=flags.retries,
        timeouts=timeouts or "failure",
        adaptive=adaptive,
        keep_workdirs=flags.keep_workdirs,
        workdir_max_bytes=flags.workdir_max_bytes,
        workdirs_max_bytes=flags.workdirs_max_bytes,
        executor=flags.executor,
        executor_settings=settings_from(dict(flags.executor_flags)),
        max_concurrent=parse_max_concurrent(flags.max_concurrent),
        results_root=root,
        max_cost=flags.max_cost,
    )
    return options, continuation


def baseline_request(flags: RunFlags) -> BaselineRequest:
    """What the end of a baseline run is asked to do (format, gate, exit rules)."""
    from caliper.commands.run_baseline import BaselineRequest

    return BaselineRequest(
        names=flags.baseline,
        require_improvement=flags.require_improvement,
        min_lift=flags.min_lift,
        fail_on=flags.fail_on,
        output_format=flags.output_format,
        page=flags.page,
        junit=flags.junit,
        verbose=flags.verbose,
        confidence=flags.confidence,
        bars=flags.bars,
        inconclusive=flags.inconclusive,
    )


def _start_baseline(
    flags: RunFlags,
    options: RunOptions,
    engines: list[str] | None,
    continuation: Continuation | None,
) -> None:
    """A baseline run (or the resume of one pair), to its end."""
    from caliper.commands.run_baseline import check_request, run_and_finish_baseline

    request = baseline_request(flags)
    check_request(request, len(engines or [None]), flags.output)
    resume_collector()
    if flags.resume is None:
        run_and_finish_baseline(options, engines, request)
        return
    from caliper.commands.resume_pair import resume_pair

    pair = resume_pair(flags, options)
    run_and_finish_baseline(
        pair.options,
        None,
        attrs.evolve(request, names=pair.left_out),
        continuations=pair.continuations,
        baseline_id=pair.baseline_id,
        seed=pair.seed,
    )
