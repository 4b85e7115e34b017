"""What ``caliper retry`` checks about the run it is given: that no other caliper process is
still running it, how many of its attempts never ran, and whether there is anything to retry
(shared by the retry of one run and of a baseline pair)."""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from caliper.errors import UsageError
from caliper.results import runlock
from caliper.results.journal import JOURNAL_SUFFIX, is_locked, journal_path


def refuse_running_parent(path: Path) -> None:
    """Refuse (exit 2) to retry a run another caliper process still runs or resumes: its
    journal or its journal lock is held."""
    journal = path if path.name.endswith(JOURNAL_SUFFIX) else journal_path(path)
    run_id = journal.name[: -len(JOURNAL_SUFFIX)]
    if is_locked(journal) or runlock.held_elsewhere(path.parent, run_id):
        raise UsageError(
            f"Run {path.parent.name}/{run_id} is still running (another caliper process holds "
            "its journal lock).",
            hint="Wait for it to finish, then retry it.",
        )


def missing_attempts(data: dict) -> int:
    """How many of a stopped run's k attempts per task never ran (0 for a complete run, a
    shard, or tasks stopped on purpose: ``--fail-fast``, or ``--k auto``'s decision)."""
    meta = data.get("meta") or {}
    try:
        k = int(meta.get("k") or 0)
    except (TypeError, ValueError):
        return 0
    if not (meta.get("partial") or meta.get("incomplete")) or meta.get("adaptive"):
        return 0  # only a stopped run lacks attempts; --k auto decides its own count
    if meta.get("shard"):
        return 0  # a shard holds its slice only
    count = 0
    for task in data.get("tasks") or []:
        if task.get("aborted") or task.get("stop_reason"):
            continue
        have = {a.get("attempt") for a in task.get("attempts") or []}
        count += sum(1 for n in range(1, k + 1) if n not in have)
    return count


def has_work(data: dict, todo: list, outcomes: tuple[str, ...]) -> bool:
    """Whether the run has attempts to retry (``todo``); says what it leaves out. A usage
    error for a killed run with attempts missing (they are resumed, not retried), or a
    stopped one with nothing else to retry."""
    meta = data["meta"]
    name = f"{meta.get('spec_name')}/{meta.get('run_id')}"
    missing = missing_attempts(data)
    spec_shown = shlex.quote(str(meta.get("spec_path"))) if meta.get("spec_path") else "SPEC"
    resume = f"caliper run {spec_shown} --resume {meta.get('run_id')}"
    if missing and (meta.get("incomplete") or not todo):
        raise UsageError(
            f"Run {name} was stopped before {missing} of its attempts ran "
            f"({'killed: only its journal is left' if meta.get('incomplete') else 'partial'}); "
            "`caliper retry` re-runs only finished attempts that failed.",
            hint=f"Run the missing attempts with `{resume}`, then retry that run.",
        )
    if missing:
        click.echo(
            f"Note: run {name} stopped before {missing} of its attempts ran; this retry does "
            f"not run them (`{resume}` does).",
            err=True,
        )
    if not todo:
        click.echo(
            f"Run {name} has no attempt whose outcome is {' or '.join(outcomes)}: "
            "nothing to retry.",
            err=True,
        )
        return False
    return True
