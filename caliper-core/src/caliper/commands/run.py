"""``caliper run SPEC``: run every task k times through an agent CLI and save the results."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from caliper.commands.attempt_options import (
    Seconds,
    force_option,
    judge_model_option,
    judge_timeout_option,
    model_option,
    retries_option,
    timeout_option,
    workers_option,
)
from caliper.commands.confidence import confidence_option
from caliper.commands.executor_options import ExecutorCommand, executor_options
from caliper.commands.gate_options import BARS_HELP, bar_options, junit_option
from caliper.commands.output_options import results_output_option, verbose_option
from caliper.results.compact import DEFAULT_MAX_ATTEMPT_CHARS, DEFAULT_MAX_TURN_CHARS
from caliper.runner.run.options import DEFAULT_K, DEFAULT_SETUP_TIMEOUT

if TYPE_CHECKING:
    from caliper.results.gate import Bar

EPILOG = (
    BARS_HELP
    + """
\b
Examples:
  caliper run my-skill.eval.yaml                     # k=3 with claude-code
  caliper run my-skill.eval.yaml --k 5 --model codex
  caliper run my-skill.eval.yaml --model codex:gpt-5.5 --workers 2
  caliper run my-skill.eval.yaml --model claude-code --model codex:gpt-5.5 --model pi
  caliper run my-skill.eval.yaml --k 10 --shard 2/4   # one CI job's slice
  caliper run my-skill.eval.yaml --ablate my-skill   # control run without the skill
  caliper run my-skill.eval.yaml --output run.json --verbose
  caliper run my-skill.eval.yaml --k 10 --min-score 0.8 --min-score "hard task=0.6"
  caliper run my-skill.eval.yaml --k 10 --min-score 0.8 --junit junit.xml

\b
Results go to .caliper/results/SPEC-NAME/RUN-ID.json in the nearest .caliper/ folder
at or above the current folder, else in a .caliper/ folder beside the spec.

\b
Before its first attempt a run removes what killed caliper runs left in $CALIPER_TMPDIR
(their sandboxes and secret files) and ends their agents, and says so (see `caliper clean`).

\b
Exit codes:
  0    the run finished and at least one attempt was usable (pass, task_fail,
       cheat) or not_checked
  1    every attempt was unusable (infra_error, timeout, judge_error), or the
       results could not be saved in .caliper/ (the message says where they went),
       or the --junit report could not be written
  2    bad usage or an invalid spec, caught before any attempt; or a
       --judge-model that cannot be resolved (what finished is saved)
  3    setup error: the agent CLI is missing or cannot log in, or an MCP
       ${VAR} is unset (partial results are saved when attempts were measured;
       a run whose agent never started is not saved);
       or a --min-score/--min-activation bar failed (or was inconclusive under
       --inconclusive fail). The message says which.
  129  stopped by SIGHUP (the terminal closed); what finished is saved as a
       partial run
  130  interrupted with Ctrl-C (what finished is saved as a partial run)
  143  stopped by SIGTERM (what finished is saved as a partial run)
  With several --model (a matrix): the worst (highest) code over the engines.

\b
Stopping: Ctrl-C, SIGTERM or SIGHUP ends the running agents and everything they
started, runs each started attempt's cleanup (up to --setup-timeout; the same
signal again cuts it short) and saves the finished attempts as a partial run.
"""
)


class AttemptCount(click.ParamType):
    """``--k``: a whole number of attempts of at least 1, or ``auto`` (adaptive k)."""

    name = "k"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None):
        if isinstance(value, int) or value == "auto":
            return value
        try:
            number = int(str(value))
        except ValueError:
            self.fail(f"{value!r} is neither a whole number nor 'auto'.", param, ctx)
        if number < 1:
            self.fail(f"{value!r} must be at least 1.", param, ctx)
        return number


@click.command(name="run", epilog=EPILOG, cls=ExecutorCommand)
@click.argument("spec", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--k",
    "k",
    type=AttemptCount(),
    default=None,
    show_default=str(DEFAULT_K),
    help="Attempts per task. The success rate is computed over these k runs "
    "(with --resume: the run's own k). 'auto': adaptive k, see --max-k.",
)
@click.option(
    "--max-k",
    type=click.IntRange(min=1),
    default=None,
    help="With --k auto: at most this many attempts per task (default 20).",
)
@click.option(
    "--min-k",
    type=click.IntRange(min=1),
    default=None,
    help="With --k auto: at least this many usable attempts per task before it may stop "
    "(default 1).",
)
@click.option(
    "--margin",
    type=click.FloatRange(min=0, max=1, min_open=True, max_open=True),
    default=None,
    metavar="D",
    help="With --k auto: the indifference zone above each bar (default 0.1). A rate at or "
    "below the bar is wrongly met, one at or above bar + D wrongly failed, each at most "
    "1 - confidence of the time; in between either decision is acceptable.",
)
@click.option(
    "--precision",
    type=click.FloatRange(min=0, max=1, min_open=True),
    default=None,
    metavar="W",
    help="With --k auto: also stop a task once its interval is narrower than W (a fraction, "
    "e.g. 0.2).",
)
@workers_option("Attempts running at the same time (scheduled per attempt, across tasks).")
@timeout_option(
    "Time budget of one attempt; the agent and everything it started are killed "
    "when it runs out, and the attempt is scored timeout."
)
@click.option(
    "--setup-timeout",
    type=Seconds(),
    default=DEFAULT_SETUP_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Time budget of a task's setup and of its cleanup command.",
)
@judge_timeout_option(
    "Time budget of one judge call (an assert: script, an expect: LLM judge); a judge "
    "that runs out is a judge_error. Default: CALIPER_JUDGE_TIMEOUT when set, else the "
    "--timeout value."
)
@click.option(
    "--ablate",
    multiple=True,
    metavar="NAME",
    help="Leave this declared skill, or declared mcp: server, out of the run (repeatable; "
    "name every skill to measure the bare agent). Write skill:NAME or mcp:NAME when a "
    "skill and a server share the name.",
)
@click.option(
    "--fail-fast",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    metavar="N",
    help="Stop scheduling a task after N consecutive infra_error/timeout attempts "
    "(the task is marked aborted). 0 runs all k.",
)
@model_option(
    "Engine that runs the tasks: BACKEND, BACKEND:MODEL or a model name "
    "(default: claude-code with its default model). Repeat it to run the spec on several "
    "engines in one pool, one saved run per engine tied by a matrix id.",
    multiple=True,
)
@judge_model_option(
    "Engine for LLM judges (expect:), same grammar as --model. Resolved only "
    "when an LLM judge actually runs (default: the --model engine, so one agent CLI "
    "is enough)."
)
@click.option(
    "--user-customizations/--no-user-customizations",
    "user_customizations",
    default=None,
    help="Also load your own agent setup into every attempt (user-level skills, rules files, "
    "settings, MCP servers; never session history or memory). Default: the spec's "
    "user_customizations:, else off, so scores stay portable.",
)
@results_output_option("Also save the results JSON to PATH.")
@verbose_option("Show every attempt's outcome and reason, and pass@k / pass^k.")
@retries_option(
    "Try an attempt up to N more times after a transient failure (infra_error: a rate "
    "limit, an overloaded or unreachable provider), with exponential backoff and jitter or "
    "the CLI's Retry-After. Every try is kept in the results. 0: never."
)
@click.option(
    "--timeouts",
    type=click.Choice(["failure", "unusable"]),
    default=None,
    help="How an attempt that runs out of --timeout is scored: failure (the default: the "
    "agent did not finish in the time allowed, a failed attempt) or unusable (left out of "
    "the rates, like an infra error). Saved in the run; report, compare and regrade follow "
    "it, and --resume keeps the run's own.",
)
@click.option(
    "--keep-workdirs",
    is_flag=True,
    help="Keep each attempt's final working directory as a .tar.gz beside the results "
    "(.caliper/results/SPEC/RUN-ID.workdirs/), so `caliper regrade` can re-run assert: "
    "checks. Links out of it and the private folder are never kept.",
)
@click.option(
    "--workdir-max-bytes",
    type=click.IntRange(min=0),
    default=50 * 1024 * 1024,
    show_default=True,
    metavar="N",
    help="With --keep-workdirs: at most N bytes of files per attempt (0: no limit); the "
    "attempt's workdir_note says what a cap left out.",
)
@click.option(
    "--workdirs-max-bytes",
    type=click.IntRange(min=0),
    default=500 * 1024 * 1024,
    show_default=True,
    metavar="N",
    help="With --keep-workdirs: at most N bytes of files for the whole run (0: no limit).",
)
@click.option(
    "--resume",
    "resume",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="[RUN]",
    help="Continue an interrupted, killed or --fail-fast-stopped run of SPEC (default: its "
    "latest run): same run id, only the missing attempts run. Refused when the spec, its "
    "skills, the engine or k changed since, or when another caliper process runs or resumes "
    "it (exit 2).",
)
@force_option(
    "With --resume: continue even though the spec, skills, engine or k changed "
    "(recorded in the run's metadata)."
)
@click.option(  # --shard: see caliper.runner.shard
    "--shard",
    "shard_text",
    metavar="I/N",
    default=None,
    help="Run only shard I of N: a fixed slice of the attempts (round-robin over tasks and "
    "attempt numbers), saved as a shard run; `caliper merge` joins the N shard runs into the "
    "whole run. Not with --k auto.",
)
@confidence_option
@click.option(
    "--max-turn-chars",
    type=click.IntRange(min=0),
    default=DEFAULT_MAX_TURN_CHARS,
    show_default=True,
    metavar="N",
    help="Keep at most N characters of each transcript turn's text in the results file "
    "(start and end, with a marker giving the original size). 0: no limit.",
)
@click.option(
    "--max-attempt-chars",
    type=click.IntRange(min=0),
    default=DEFAULT_MAX_ATTEMPT_CHARS,
    show_default=True,
    metavar="N",
    help="Keep at most N characters of text per attempt (final answer first, then the "
    "transcript). Judges always see everything. 0: no limit.",
)
@bar_options
@junit_option
@executor_options
def command(
    spec: Path,
    k: int,
    workers: int,
    timeout: float,
    setup_timeout: float,
    judge_timeout: float | None,
    max_k: int | None,
    min_k: int | None,
    margin: float | None,
    precision: float | None,
    ablate: tuple[str, ...],
    fail_fast: int,
    model: tuple[str, ...] | str | None,
    judge_model: str | None,
    user_customizations: bool | None,
    output: Path | None,
    verbose: bool,
    confidence: float,
    max_turn_chars: int,
    max_attempt_chars: int,
    min_score: tuple[Bar, ...],
    min_activation: tuple[Bar, ...],
    inconclusive: str,
    junit: Path | None,
    retries: int,
    timeouts: str | None,
    keep_workdirs: bool,
    workdir_max_bytes: int,
    workdirs_max_bytes: int,
    resume: str | None,
    force: bool,
    shard_text: str | None,
    executor: str,
    max_concurrent: tuple[str, ...],
    **executor_flags: str | None,
) -> None:
    """Run SPEC's tasks k times through a real agent CLI and save the results.

    Each attempt runs in a fresh, isolated home with the spec's skills installed where the
    agent discovers them. Results are saved as JSON (see `caliper report`) and summarised
    here. Progress is shown on stderr when it is a terminal.
    """
    from caliper.commands.executor_options import settings_from
    from caliper.commands.finishing import finish_report
    from caliper.commands.gate_options import check_bars_before_run, check_junit_target
    from caliper.runner import RunOptions, run_spec
    from caliper.runner.run.executors import parse_max_concurrent
    from caliper.runner.run.options import judge_timeout_from_env

    executor_settings = settings_from(executor_flags)
    limits = parse_max_concurrent(max_concurrent)
    from caliper.commands.run_matrix import split_models  # many engines

    model, engines = split_models(model, resume=resume, output=output, junit=junit)

    if judge_timeout is None:
        judge_timeout = judge_timeout_from_env()
    adaptive = adaptive_settings(
        k,
        max_k,
        min_k,
        precision,
        min_score,
        confidence,
        margin=margin,
        family=len(min_score) + len(min_activation),
        inconclusive=inconclusive,
        timeouts=timeouts or "failure",
    )
    if adaptive is not None:
        k = adaptive.max_k
    root = results_root(spec)  # the one place the results folder is found
    continuation = None
    if resume is not None:
        continuation, (k, model, judge_model, ablate, timeouts) = _resumed(
            spec, resume, force, root, adaptive, (k, model, judge_model, ablate, timeouts)
        )
    elif force:
        from caliper.errors import UsageError

        raise UsageError("--force only applies with --resume.")
    shard = _shard(shard_text, adaptive is not None, continuation)
    options = RunOptions(
        shard=shard,
        spec_path=spec,
        k=k if k is not None else DEFAULT_K,
        workers=workers,
        timeout=timeout,
        setup_timeout=setup_timeout,
        ablate=tuple(dict.fromkeys(ablate)),
        fail_fast=fail_fast,
        model=model,
        judge_model=judge_model,
        user_customizations=user_customizations,
        output=output,
        verbose=verbose,
        judge_timeout=judge_timeout,
        max_turn_chars=max_turn_chars,
        max_attempt_chars=max_attempt_chars,
        retries=retries,
        timeouts=timeouts or "failure",
        adaptive=adaptive,
        keep_workdirs=keep_workdirs,
        workdir_max_bytes=workdir_max_bytes,
        workdirs_max_bytes=workdirs_max_bytes,
        executor=executor,
        executor_settings=executor_settings,
        max_concurrent=limits,
        results_root=root,
    )
    check_save_targets(spec, output, root)
    bars = (*min_score, *min_activation)
    check_bars_before_run(spec, bars)
    check_junit_target(junit)
    if engines:  # many engines in one run
        from caliper.cli import resume_collector
        from caliper.commands.run_matrix import run_and_finish_matrix

        resume_collector()
        run_and_finish_matrix(options, engines, verbose, confidence, bars, inconclusive)
        return
    report = run_spec(options, continuation=continuation, warm_up=_import_the_report)
    finish_report(report, verbose, output, confidence, bars, inconclusive, junit)


def _resumed(spec: Path, resume: str, force: bool, root: Path, adaptive, given: tuple):
    """``--resume``: the continuation of the saved run it names, and the settings
    ``given`` on the command line as ``(k, model, judge_model, ablate, timeouts)``, each one
    not given taken from that run."""
    if adaptive is not None:
        from caliper.errors import UsageError

        raise UsageError("--resume cannot be combined with --k auto yet.")
    k, model, judge_model, ablate, timeouts = given
    continuation = resume_source(spec, resume, force, root)
    meta = continuation.meta
    k = k if k is not None else int(meta.get("k") or DEFAULT_K)
    model = model if model is not None else meta.get("requested_model", meta.get("backend"))
    judge_model = judge_model if judge_model is not None else meta.get("judge_requested")
    ablate = ablate or tuple(meta.get("ablated") or ())
    timeouts = timeouts if timeouts is not None else meta.get("timeouts")
    return continuation, (k, model, judge_model, ablate, timeouts)


def _shard(shard_text: str | None, adaptive: bool, continuation):
    """The shard of ``--shard I/N`` (or of the resumed run), ``None`` for a whole run."""
    if shard_text is None and continuation is None:
        return None
    from caliper.runner.shard import shard_for_run

    return shard_for_run(
        shard_text,
        adaptive=adaptive,
        resumed=continuation.meta if continuation is not None else None,
    )


def adaptive_settings(
    k: int | str | None,
    max_k: int | None,
    min_k: int | None,
    precision: float | None,
    min_score: tuple[Bar, ...],
    confidence: float,
    *,
    margin: float | None = None,
    family: int = 1,
    inconclusive: str = "fail",
    timeouts: str = "failure",
):
    """The ``--k auto`` settings, ``None`` for a fixed k; misuse is a usage error (exit 2).

    With ``--k auto`` the ``--min-score`` bars (the same bars the gate judges) are what each
    task is decided against; ``family`` (the gate's number of bars) shares the failed side's
    error among them, and under ``--inconclusive fail`` a task whose bar can no longer be met
    stops (the gate's outcome is settled).
    """
    from caliper.errors import UsageError

    if k != "auto":
        used = [
            flag
            for flag, value in (
                ("--max-k", max_k),
                ("--min-k", min_k),
                ("--margin", margin),
                ("--precision", precision),
            )
            if value is not None
        ]
        if used:
            raise UsageError(
                f"{', '.join(used)} only appl{'ies' if len(used) == 1 else 'y'} with --k auto.",
                hint="Add --k auto for adaptive k, or drop the flag.",
            )
        return None
    from caliper.results.sequential import DEFAULT_MARGIN
    from caliper.runner.adaptive import AdaptiveSettings

    run_bar, task_bars = None, {}
    for bar in min_score:
        if bar.task is None:
            run_bar = bar.threshold
        else:
            task_bars[bar.task] = bar.threshold
    if run_bar is None and not task_bars and precision is None:
        raise UsageError(
            "--k auto needs something to decide: a bar (--min-score 0.8) or a precision "
            "(--precision 0.2).",
            hint="Each task stops once its bar is decided or its interval is narrow enough.",
        )
    max_k = max_k or 20
    min_k = min_k or 1
    if min_k > max_k:
        raise UsageError(f"--min-k {min_k} is larger than --max-k {max_k}.")
    return AdaptiveSettings(
        max_k=max_k,
        min_k=min_k,
        precision=precision,
        confidence=confidence,
        run_bar=run_bar,
        task_bars=task_bars,
        margin=margin if margin is not None else DEFAULT_MARGIN,
        family=max(family, 1),
        settle=inconclusive == "fail",
        timeouts=timeouts,
    )


def results_root(spec: Path) -> Path:
    """The ``.caliper/`` folder a run of ``spec`` from here is saved in (absolute), found
    once per command: the nearest one at or above the current folder, else beside the spec."""
    from caliper.results.store import caliper_root

    return caliper_root(Path.cwd(), spec).absolute()


def resume_source(spec: Path, ref: str, force: bool, root: Path | None = None):
    """The saved run ``--resume [RUN]`` names (default: SPEC's latest), as a continuation;
    ``root`` is the results folder (default: found from the current folder)."""
    from caliper.errors import UsageError
    from caliper.results.store import (
        ResultsError,
        caliper_root,
        latest_run,
        load_run_data,
        resolve_run_ref,
    )
    from caliper.runner.run.plan import Continuation
    from caliper.spec.model import spec_name_for

    cwd = Path.cwd()
    if ref:
        path = resolve_run_ref(ref, cwd=cwd)
    else:
        try:
            entry = latest_run(root or caliper_root(cwd, spec), spec_name_for(spec))
        except ResultsError:
            entry = None
        if entry is None:
            raise UsageError(
                f"--resume: {spec} has no saved run to continue.",
                hint="Run it without --resume first (`caliper list` shows saved runs).",
            )
        path = entry.path
    path = lock_continued_run(path, root or caliper_root(cwd, spec).absolute(), spec_name_for(spec))
    data = load_run_data(path)
    if data["meta"].get("spec_name") != spec_name_for(spec):
        raise UsageError(
            f"--resume {ref}: that run is of spec {data['meta'].get('spec_name')!r}, not of "
            f"{spec_name_for(spec)!r}.",
            hint="Name a run of this spec (`caliper list SPEC` shows them).",
        )
    return Continuation(kind="resume", path=path, data=data, force=force)


def lock_continued_run(path: Path, root: Path, spec_name: str) -> Path:
    """Take the journal lock of the run ``path`` names (a results file or a journal) before it
    is read, so what a resume plans from cannot change under it; the path to read then (a
    journal a run finished meanwhile is now its results file).

    Raises :class:`~caliper.errors.UsageError` (exit 2) when another caliper process holds the
    lock or the journal: the run is still going (or being resumed)."""
    from caliper.errors import UsageError
    from caliper.results import runlock
    from caliper.results.journal import JOURNAL_SUFFIX, is_locked, journal_path, results_path
    from caliper.results.store import RESULTS_DIR, ResultsWriteError

    journal = path.name.endswith(JOURNAL_SUFFIX)
    run_id = path.name[: -len(JOURNAL_SUFFIX)] if journal else path.stem
    folder = root / RESULTS_DIR / spec_name
    try:
        taken = runlock.acquire(folder, run_id)
    except OSError as exc:
        raise ResultsWriteError(
            f"Could not lock run {spec_name}/{run_id} in {folder}: {exc.strerror or exc}.",
            hint="Fix the folder's permissions, then resume again.",
        ) from exc
    still_running = UsageError(
        f"Run {spec_name}/{run_id} is still running (another caliper process holds its "
        "journal lock): it is not resumed twice.",
        hint="Wait for that process to finish, or stop it first; then resume again.",
    )
    if not taken:
        raise still_running
    kept = folder / f"{run_id}{JOURNAL_SUFFIX}"
    if is_locked(kept) or (journal and is_locked(path)):
        runlock.release(folder, run_id)
        raise still_running
    if journal and not path.exists() and results_path(path).exists():
        return results_path(path)  # the run it named finished meanwhile
    if not journal and not path.exists() and journal_path(path).exists():
        return journal_path(path)
    return path


def _existing_ancestor(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_save_targets(spec: Path, output: Path | None, root: Path | None = None) -> None:
    """Fail before any attempt runs when the results obviously cannot be saved: ``--output``
    is a folder or under a file or read-only folder, or the results store (``root``, default:
    found from the current folder) is read-only."""
    from caliper.errors import UsageError
    from caliper.results.store import caliper_root, export_problem, writes_directly

    if output is not None:
        if output.is_dir():
            raise UsageError(f"--output {output}: is a directory; name a file such as run.json.")
        problem = export_problem(output)
        if problem:
            raise UsageError(f"--output {output}: {problem}; name a file such as run.json.")
        folder = _existing_ancestor(output.parent)
        if not folder.is_dir():
            raise UsageError(
                f"--output {output}: {folder} is a file, so the results cannot be saved under it."
            )
        if not writes_directly(output) and not os.access(folder, os.W_OK):
            raise UsageError(
                f"--output {output}: the folder {folder} is not writable.",
                hint="Pick a folder you can write to, or fix its permissions.",
            )
    if not spec.is_file():
        return  # the spec loader reports a missing spec better
    store = _existing_ancestor(root or caliper_root(Path.cwd(), spec))
    if store.is_dir() and not os.access(store, os.W_OK):
        raise UsageError(
            f"Results cannot be saved: the folder {store} is not writable.",
            hint="Run from a folder you can write to (results go to the nearest .caliper/ "
            "folder, else one beside the spec), or fix its permissions.",
        )


def _import_the_report() -> None:
    """Import what the final report is drawn with, and turn the cycle collector back on if
    the console script paused it for the start-up (called once the first agents are out)."""
    import caliper.report.run_view  # noqa: F401
    from caliper.cli import resume_collector

    resume_collector()
