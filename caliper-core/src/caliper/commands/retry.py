"""``caliper retry RUN``: re-run exactly the unusable attempts of a saved run, as a new run."""

from __future__ import annotations

from pathlib import Path

import click

from caliper.commands.attempt_options import force_option, retries_option, workers_option
from caliper.commands.confidence import confidence_option
from caliper.commands.finishing import finish_report
from caliper.commands.output_options import results_output_option, verbose_option
from caliper.commands.retry_checks import has_work, missing_attempts, refuse_running_parent
from caliper.commands.retry_pair import retry_pair
from caliper.commands.run_setup import check_save_targets, results_root
from caliper.errors import UsageError
from caliper.results.store import load_run_data, resolve_run_ref
from caliper.runner import run_spec
from caliper.runner.run.options import RunOptions
from caliper.runner.run.plan import RETRYABLE, Continuation, saved_ablate

__all__ = ["command", "has_work", "missing_attempts", "parse_only", "refuse_running_parent"]

EPILOG = """\b
Examples:
  caliper retry my-skill                       # the latest run of my-skill
  caliper retry 2026-11-30T18-01-33Z --only infra_error
  caliper retry my-skill/2026-11-30T18-01-33Z --workers 1

\b
The new run has a new id; its metadata names the parent run (parent_run) and what was
retried (changes). Each retried attempt keeps its earlier tries in `tries`; its score is its
last try. The other attempts are copied over unchanged. The spec is read from where the
parent run read it; a spec, skill set or engine that changed since is refused (--force goes
on and records it).

\b
Exit codes: as `caliper run` (0 usable results, 1 every attempt unusable or the results
could not be saved, 2 bad usage: RUN not found, a bad --only, a changed spec without
--force, a run still running, a killed run with attempts missing: resume it with
`caliper run SPEC --resume RUN` first; 3 setup error, 129/130/143 stopped by a signal).
Nothing to retry: 0.
"""


def parse_only(value: str) -> tuple[str, ...]:
    """``--only`` as outcome names; anything but the unusable outcomes is a usage error."""
    names = tuple(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
    wrong = [name for name in names if name not in RETRYABLE]
    if wrong or not names:
        raise UsageError(
            f"--only {value!r}: {', '.join(wrong) or 'no outcome'} is not an outcome that can "
            "be retried.",
            hint=f"Name one or more of {', '.join(RETRYABLE)}, separated by commas.",
        )
    return names


@click.command(name="retry", epilog=EPILOG)
@click.argument("ref", metavar="RUN")
@click.option(
    "--only",
    default="infra_error,timeout,judge_error",
    show_default=True,
    metavar="OUTCOMES",
    help="Retry only attempts with these outcomes (comma-separated).",
)
@retries_option("As `caliper run --retries`: more tries after a transient failure.")
@workers_option("Attempts at the same time (default: the parent run's).", default=None)
@force_option("Retry even though the spec, its skills or the engine changed since the parent run.")
@results_output_option()
@verbose_option()
@confidence_option
def command(
    ref: str,
    only: str,
    retries: int,
    workers: int | None,
    force: bool,
    output: Path | None,
    verbose: bool,
    confidence: float,
) -> None:
    """Re-run the unusable attempts (infra_error, timeout, judge_error) of the saved run RUN.

    RUN is a run id, SPEC/RUN-ID, a results file, a spec file or a spec name (its latest
    run), as for `caliper report`.
    """
    outcomes = parse_only(only)
    path = resolve_run_ref(ref, cwd=Path.cwd())
    refuse_running_parent(path)
    data = load_run_data(path)
    meta = data["meta"]
    todo = [
        a
        for task in data.get("tasks") or []
        for a in task.get("attempts") or []
        if a.get("outcome") in outcomes
    ]
    if not meta.get("baseline") and not has_work(data, todo, outcomes):
        return  # (a baseline arm's pair is checked as a pair)
    spec = Path(meta.get("spec_path") or "")
    if not spec.is_file():
        raise UsageError(
            f"Cannot retry run {meta.get('spec_name')}/{meta.get('run_id')}: its spec {spec} is "
            "not there any more.",
            hint="Put the spec back where the run read it, then retry.",
        )
    root = results_root(spec)  # found once: checked below, saved in by the run
    options = RunOptions(
        spec_path=spec,
        k=int(meta.get("k") or 1),
        workers=workers or int(meta.get("workers") or 1),
        timeout=float(meta.get("timeout") or 120.0),
        ablate=saved_ablate(meta),
        model=meta.get("requested_model", meta.get("backend")),
        judge_model=meta.get("judge_requested"),
        output=output,
        verbose=verbose,
        retries=retries,
        results_root=root,
    )
    check_save_targets(spec, output, root)
    if meta.get("baseline"):  # an arm of a baseline pair: both arms are retried, as a pair
        retry_pair(path, data, options, outcomes, force, confidence)
        return
    continuation = Continuation(kind="retry", path=path, data=data, only=outcomes, force=force)
    report = run_spec(options, continuation=continuation)
    finish_report(report, verbose, output, confidence)
