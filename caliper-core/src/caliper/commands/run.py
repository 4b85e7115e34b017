"""``caliper run SPEC``: run every task k times through an agent CLI and save the results."""

from __future__ import annotations

from pathlib import Path

import click

from caliper.runner.options import (
    DEFAULT_K,
    DEFAULT_SETUP_TIMEOUT,
    DEFAULT_TIMEOUT,
    DEFAULT_WORKERS,
)

EPILOG = """\b
Exit codes:
  0    the run finished and at least one attempt was usable (pass, task_fail,
       cheat) or not_checked
  1    every attempt was unusable (infra_error, timeout, judge_error)
  2    bad usage or an invalid spec, caught before any attempt; or a
       --judge-model that cannot be resolved (what finished is saved)
  3    setup error: the agent CLI is missing or cannot log in, or an MCP
       ${VAR} is unset (partial results are saved when attempts already ran)
  130  interrupted with Ctrl-C (what finished is saved as a partial run)
"""


@click.command(name="run", epilog=EPILOG)
@click.argument("spec", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--k",
    "k",
    type=click.IntRange(min=1),
    default=DEFAULT_K,
    show_default=True,
    help="Attempts per task. The success rate is computed over these k runs.",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=DEFAULT_WORKERS,
    show_default=True,
    help="Attempts running at the same time (scheduled per attempt, across tasks).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Time budget of one attempt; the agent and everything it started are killed "
    "when it runs out, and the attempt is scored timeout.",
)
@click.option(
    "--setup-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=DEFAULT_SETUP_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Time budget of a task's setup and of its cleanup command.",
)
@click.option(
    "--ablate",
    multiple=True,
    metavar="NAME",
    help="Leave this declared skill out of the installed neighbourhood (repeatable; "
    "name every skill to measure the bare agent).",
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
@click.option(
    "--model",
    metavar="TARGET",
    help="Engine that runs the tasks: BACKEND, BACKEND:MODEL or a model name "
    "(default: claude-code with its default model).",
)
@click.option(
    "--judge-model",
    metavar="TARGET",
    help="Engine for LLM judges (expect:), same grammar as --model. Resolved only "
    "when an LLM judge actually runs (default: claude-code).",
)
@click.option(
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="PATH",
    help="Also save the results JSON to PATH.",
)
@click.option(
    "--verbose",
    "-v",
    is_flag=True,
    help="Show every attempt's outcome and reason, and pass@k / pass^k.",
)
def command(
    spec: Path,
    k: int,
    workers: int,
    timeout: float,
    setup_timeout: float,
    ablate: tuple[str, ...],
    fail_fast: int,
    model: str | None,
    judge_model: str | None,
    output: Path | None,
    verbose: bool,
) -> None:
    """Run SPEC's tasks k times through a real agent CLI and save the results.

    Each attempt runs in a fresh, isolated home with the spec's skills installed where the
    agent discovers them. Results are saved as JSON (see `caliper report`) and summarised
    here. Progress is shown on stderr when it is a terminal.
    """
    from caliper.errors import CaliperError
    from caliper.runner import EXIT_ALL_UNUSABLE, EXIT_INTERRUPTED, RunOptions, run_spec

    options = RunOptions(
        spec_path=spec,
        k=k,
        workers=workers,
        timeout=timeout,
        setup_timeout=setup_timeout,
        ablate=tuple(dict.fromkeys(ablate)),
        fail_fast=fail_fast,
        model=model,
        judge_model=judge_model,
        output=output,
        verbose=verbose,
    )
    report = run_spec(options)
    from caliper.report import make_console
    from caliper.report.run_view import render_run  # after saving: a render bug loses nothing

    console = make_console()
    render_run(report.results, console, verbose=verbose, path=report.saved_to)
    if report.fatal is not None:
        raise report.fatal
    if report.interrupted:
        raise CaliperError(
            "Interrupted: the attempts that finished were saved as a partial run.",
            exit_code=EXIT_INTERRUPTED,
        )
    if report.exit_code == EXIT_ALL_UNUSABLE:
        raise CaliperError(
            "Every attempt was unusable (infra_error, timeout or judge_error), so no success "
            "rate could be measured.",
            hint="The reasons are in the report above (add --verbose for each attempt).",
            exit_code=EXIT_ALL_UNUSABLE,
        )
