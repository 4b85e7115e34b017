"""``caliper run SPEC``: run every task k times through an agent CLI and save the results."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from caliper.commands.confidence import confidence_option
from caliper.runner.options import (
    DEFAULT_K,
    DEFAULT_SETUP_TIMEOUT,
    DEFAULT_TIMEOUT,
    DEFAULT_WORKERS,
)

if TYPE_CHECKING:
    from caliper.runner import RunReport

EPILOG = """\b
Examples:
  caliper run my-skill.eval.yaml                     # k=3 with claude-code
  caliper run my-skill.eval.yaml --k 5 --model codex
  caliper run my-skill.eval.yaml --model codex:gpt-5.5 --workers 2
  caliper run my-skill.eval.yaml --ablate my-skill   # control run without the skill
  caliper run my-skill.eval.yaml --output run.json --verbose

\b
Results go to .caliper/results/SPEC-NAME/RUN-ID.json in the nearest .caliper/ folder
at or above the current folder, else in a .caliper/ folder beside the spec.

\b
Exit codes:
  0    the run finished and at least one attempt was usable (pass, task_fail,
       cheat) or not_checked
  1    every attempt was unusable (infra_error, timeout, judge_error), or the
       results could not be saved in .caliper/ (the message says where they went)
  2    bad usage or an invalid spec, caught before any attempt; or a
       --judge-model that cannot be resolved (what finished is saved)
  3    setup error: the agent CLI is missing or cannot log in, or an MCP
       ${VAR} is unset (partial results are saved when attempts already ran)
  130  interrupted with Ctrl-C (what finished is saved as a partial run)
"""


class Seconds(click.FloatRange):
    """A positive, finite number of seconds (``inf``/``nan`` would be saved as invalid JSON
    and would never time out)."""

    name = "number of seconds"

    def __init__(self) -> None:
        super().__init__(min=0, min_open=True)

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None):
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite number of seconds.", param, ctx)
        return seconds


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
    type=Seconds(),
    default=DEFAULT_TIMEOUT,
    show_default=True,
    metavar="SECONDS",
    help="Time budget of one attempt; the agent and everything it started are killed "
    "when it runs out, and the attempt is scored timeout.",
)
@click.option(
    "--setup-timeout",
    type=Seconds(),
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
@confidence_option
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
    confidence: float,
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
    check_save_targets(spec, output)
    report = run_spec(options)
    _show(report, verbose, output, confidence)
    if report.save_error is not None:
        raise report.save_error
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


def _existing_ancestor(path: Path) -> Path:
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def check_save_targets(spec: Path, output: Path | None) -> None:
    """Fail before any attempt runs when the results obviously cannot be saved: ``--output``
    is a folder or under a file or read-only folder, or the results store is read-only."""
    from caliper.errors import UsageError
    from caliper.results.store import caliper_root

    if output is not None:
        if output.is_dir():
            raise UsageError(f"--output {output}: is a directory; name a file such as run.json.")
        folder = _existing_ancestor(output.parent)
        if not folder.is_dir():
            raise UsageError(
                f"--output {output}: {folder} is a file, so the results cannot be saved under it."
            )
        if not os.access(folder, os.W_OK):
            raise UsageError(
                f"--output {output}: the folder {folder} is not writable.",
                hint="Pick a folder you can write to, or fix its permissions.",
            )
    if not spec.is_file():
        return  # the spec loader reports a missing spec better
    store = _existing_ancestor(caliper_root(Path.cwd(), spec))
    if store.is_dir() and not os.access(store, os.W_OK):
        raise UsageError(
            f"Results cannot be saved: the folder {store} is not writable.",
            hint="Run from a folder you can write to (results go to the nearest .caliper/ "
            "folder, else one beside the spec), or fix its permissions.",
        )


def _show(report: RunReport, verbose: bool, output: Path | None, confidence: float) -> None:
    """Print the run's report; a rendering bug must not hide where the results are."""
    from caliper.errors import CaliperError
    from caliper.report import make_console
    from caliper.report.run_view import render_run

    try:
        console = make_console()
        render_run(
            report.results, console, verbose=verbose, path=report.saved_to, confidence=confidence
        )
        if output is not None and report.saved_to is not None and report.save_error is None:
            console.print(f"A copy was saved to {output}", soft_wrap=True, markup=False)
    except BrokenPipeError:
        raise
    except Exception as exc:  # the results are already saved; say where instead of crashing
        where = report.saved_to
        raise CaliperError(
            f"Showing the report failed ({type(exc).__name__}: {exc}); the results "
            + (f"are saved in {where}." if where else "were not saved (see above)."),
            hint=f"Try `caliper report {where}`, and please report this bug." if where else None,
        ) from exc
