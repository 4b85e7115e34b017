"""What ``caliper run`` sets up before its first attempt, shared with ``retry``, ``merge`` and
``regrade``: the results folder (found once), the saved run ``--resume`` continues (locked
before it is read), the ``--k auto`` settings, the shard, and the checks that the results can
be saved at all."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from caliper.cli import resume_collector
from caliper.errors import UsageError
from caliper.results.store import (
    RESULTS_DIR,
    ResultsError,
    ResultsWriteError,
    caliper_root,
    export_problem,
    latest_run,
    load_run_data,
    resolve_run_ref,
    writes_directly,
)
from caliper.runner.run.options import DEFAULT_K
from caliper.runner.run.plan import Continuation, saved_ablate
from caliper.spec.model import spec_name_for

if TYPE_CHECKING:
    from caliper.results.gate import Bar


def resumed(spec: Path, resume: str, force: bool, root: Path, adaptive, given: tuple):
    """``--resume``: the continuation of the saved run it names, and the settings
    ``given`` on the command line as ``(k, model, judge_model, ablate, timeouts)``, each one
    not given taken from that run."""
    if adaptive is not None:
        raise UsageError("--resume cannot be combined with --k auto yet.")

    k, model, judge_model, ablate, timeouts = given
    continuation = resume_source(spec, resume, force, root)
    meta = continuation.meta
    k = k if k is not None else int(meta.get("k") or DEFAULT_K)
    model = model if model is not None else meta.get("requested_model", meta.get("backend"))
    judge_model = judge_model if judge_model is not None else meta.get("judge_requested")
    ablate = ablate or saved_ablate(meta)
    timeouts = timeouts if timeouts is not None else meta.get("timeouts")
    return continuation, (k, model, judge_model, ablate, timeouts)


def shard_of(shard_text: str | None, adaptive: bool, continuation):
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
    decides_difference: bool = False,
):
    """The ``--k auto`` settings, ``None`` for a fixed k; misuse is a usage error (exit 2).

    With ``--k auto`` the ``--min-score`` bars (the same bars the gate judges) are what each
    task is decided against; ``family`` (the gate's number of bars) shares the failed side's
    error among them, and under ``--inconclusive fail`` a task whose bar can no longer be met
    stops (the gate's outcome is settled). With ``decides_difference`` (a baseline) what
    each task is decided on is the difference between the arms, so no bar is needed.
    """
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
    if run_bar is None and not task_bars and precision is None and not decides_difference:
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
    return caliper_root(Path.cwd(), spec).absolute()


def resume_source(spec: Path, ref: str, force: bool, root: Path | None = None):
    """The saved run ``--resume [RUN]`` names (default: SPEC's latest), as a continuation;
    ``root`` is the results folder (default: found from the current folder)."""
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
    from caliper.results import runlock
    from caliper.results.journal import JOURNAL_SUFFIX, is_locked, journal_path, results_path

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


REPORT_MODULES = (
    "caliper.report.run_view",
    "caliper.report.spend_view",
    "caliper.report.tool_usage_view",
    "caliper.results.spend",
    "rich._emoji_codes",
)
"""What the final report is drawn with: the view and the modules it imports as it draws (the
spend and tool-usage sections, rich's emoji table for its markup)."""


def import_the_report() -> None:
    """Import :data:`REPORT_MODULES`, compile the regular expressions rich highlights the
    report's text with, load its table of character widths, and turn the cycle collector
    back on if the console script paused it for the start-up (called once the first agents
    are out, so none of it waits for the last agent to end)."""
    for name in REPORT_MODULES:
        importlib.import_module(name)
    from rich.cells import cell_len
    from rich.highlighter import ReprHighlighter
    from rich.text import Text

    ReprHighlighter()(Text("0"))  # each pattern compiled into re's cache
    cell_len("—")  # rich's table of character widths, loaded for the first wide character

    resume_collector()
