"""``caliper run SPEC``: run every task k times through an agent CLI and save the results."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from caliper.commands.gate_options import (
    BARS_HELP,
    bar_options,
    fail_on_option,
    junit_option,
    lift_gate_options,
)
from caliper.commands.output_options import results_output_option, verbose_option
from caliper.results.compact import DEFAULT_MAX_ATTEMPT_CHARS, DEFAULT_MAX_TURN_CHARS
from caliper.runner.run.options import DEFAULT_K, DEFAULT_SETUP_TIMEOUT

if TYPE_CHECKING:
    pass

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
  caliper run my-skill.eval.yaml --k 10 --baseline   # with and without the skill, compared
  caliper run my-skill.eval.yaml --k 10 --baseline --require-improvement --junit j.xml
  caliper run my-skill.eval.yaml --ablate helper     # a run without the neighbour "helper"
  caliper run my-skill.eval.yaml --output run.json --verbose
  caliper run my-skill.eval.yaml --k 10 --min-score 0.8 --min-score "hard task=0.6"
  caliper run my-skill.eval.yaml --k 10 --min-score 0.8 --junit junit.xml
  caliper run my-skill.eval.yaml --k 10 --max-cost-per-attempt 0.25 --max-duration 120

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
       or a --min-score/--min-activation/--max-cost-per-attempt/--max-duration
       bar failed (or was inconclusive under --inconclusive fail). The message
       says which.
  4    stopped at the --max-cost budget (what finished is saved as a partial run)
  129  stopped by SIGHUP (the terminal closed); what finished is saved as a
       partial run
  130  interrupted with Ctrl-C (what finished is saved as a partial run)
  143  stopped by SIGTERM (what finished is saved as a partial run)
  With several --model (a matrix): the worst (highest) code over the engines.
  With --baseline, after the run's own codes above: 1 when the skill hurts (a
  supported drop of what --fail-on names), 3 when --require-improvement or
  --min-lift fails.

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
@click.argument(
    "spec", type=click.Path(path_type=Path, dir_okay=False), required=False, metavar="SPEC"
)
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
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    metavar="USD",
    help="Stop starting attempts once the attempts' reported cost reaches USD (over every "
    "engine and arm of the run); those running finish, the run is saved as partial and exits 4. "
    "Only CLIs that report a cost count (Claude Code does); the end says when none did.",
)
@click.option(
    "--baseline",
    "baseline",
    multiple=True,
    is_flag=False,
    flag_value="",
    default=(),
    metavar="[NAME]",
    help="Also run a control arm without the skill under test (the first declared skill) in the "
    "same session, attempts of both arms interleaved, and end with the calibrated comparison: "
    "helps / hurts / no detectable difference. --baseline NAME (repeatable) leaves out these "
    "declared skills or mcp: servers instead. Write it after SPEC, or as --baseline=NAME.",
)
@lift_gate_options(
    "With --baseline: exit 3 unless the skill's lift over the control arm is statistically "
    "supported (compare's verdict 'improved'; under --k auto its anytime-valid interval lies "
    "above 0).",
    "With --baseline: exit 3 unless the lift's interval (full − control, a fraction: 0.2 = 20 "
    "points) lies wholly above D. Under --k auto each task stops once its lift is decided "
    "against D.",
)
@fail_on_option(
    "With --baseline: which supported drop with the skill in exits 1, as `caliper compare "
    "--fail-on` (of the success score, of activation, or of either)."
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(("text", "json", "markdown", "html")),
    default="text",
    show_default=True,
    help="With --baseline: how the comparison at the end is printed (json, markdown and html "
    "on stdout; where the runs were saved then goes to stderr).",
)
@click.option(
    "--page",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    metavar="FILE",
    help="With --baseline --format html: write the page to FILE instead of stdout, and each "
    "arm's own report page beside it (FILE's stem + .runs/).",
)
@bar_options
@junit_option
@executor_options
def command(spec: Path | None, **flags: Any) -> None:
    """Run SPEC's tasks k times through a real agent CLI and save the results.

    Each attempt runs in a fresh, isolated home with the spec's skills installed where the
    agent discovers them. Results are saved as JSON (see `caliper report`) and summarised
    here. Progress is shown on stderr when it is a terminal. With --baseline the same run
    also measures the spec without the skill under test and ends with the comparison.
    """
    from caliper.commands.run_start import RunFlags, start_run

    start_run(RunFlags.from_click(spec, flags))
