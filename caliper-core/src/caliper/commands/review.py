"""``caliper review RUN OVERRIDES``: a person's verdicts on some attempts of a saved run,
saved as a new run derived from it (the parent is untouched)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from caliper.commands.confidence import confidence_option
from caliper.commands.output_options import results_output_option, verbose_option
from caliper.commands.regrade import _save, _show
from caliper.errors import UsageError
from caliper.results.store import load_run_data, resolve_run_ref
from caliper.runner.run.meta import now_iso

EPILOG = """\b
OVERRIDES is a JSON file:
  {"reviewer": "ana", "overrides": [
     {"task": "Writes a commit", "attempt": 2, "verdict": "pass", "note": "42 is right"}]}
verdict is pass or fail; attempt is 1-based; note is required (it says why).

\b
Each overridden attempt gets the outcome pass or task_fail and a `review` check holding
the verdict and the note; the new run names its parent (parent_run), derived_by: review,
and who reviewed and when (changes), so every score made from it uses the overrides and
says so.

\b
Exit codes:
  0  the reviewed run was saved
  1  every attempt is still unusable, or the results could not be saved
  2  RUN not found; OVERRIDES unreadable, malformed, or naming an attempt RUN does not have
  130  stopped by Ctrl-C (143 SIGTERM, 129 SIGHUP); no new run is left unless it was
       saved whole before the signal
"""

VERDICTS = {"pass": "pass", "fail": "task_fail"}


@click.command(name="review", epilog=EPILOG)
@click.argument("ref", metavar="RUN")
@click.argument("overrides_file", metavar="OVERRIDES", type=click.Path(path_type=Path))
@click.option("--reviewer", help="Who reviewed (default: the file's reviewer).")
@results_output_option()
@verbose_option()
@confidence_option
def command(
    ref: str,
    overrides_file: Path,
    reviewer: str | None,
    output: Path | None,
    verbose: bool,
    confidence: float,
) -> None:
    """Save RUN with a person's verdicts (OVERRIDES) as a new run derived from it."""
    path = resolve_run_ref(ref, cwd=Path.cwd())
    doc = read_overrides(overrides_file)
    who = reviewer or doc.get("reviewer")
    if not isinstance(who, str) or not who.strip():
        raise UsageError(
            f"{overrides_file} names no reviewer.", hint="Add --reviewer NAME or a reviewer field."
        )
    data = load_run_data(path)
    meta = data["meta"]
    name = f"{meta.get('spec_name')}/{meta.get('run_id')}"
    started = now_iso()
    attempts = apply_overrides(data, doc["overrides"], who.strip(), name)
    new_meta = dict(meta)
    new_meta.update(
        parent_run=name,
        derived_by="review",
        changes=[
            f"verdicts of {len(doc['overrides'])} attempt(s) set by {who.strip()} at {started} "
            "(a person's review)"
        ],
        started_at=started,
        finished_at=now_iso(),
        resumed_at=[],
        incomplete=False,
        gate=None,  # the parent's verdicts were judged on its grades, not these
    )
    results, saved = _save(path, data, new_meta, attempts, output)
    _show(results, saved, verbose, confidence)


def read_overrides(path: Path) -> dict[str, Any]:
    """The overrides file, checked: ``overrides`` a non-empty list of ``task``, ``attempt``
    (int), ``verdict`` (pass / fail) and ``note`` (non-empty text)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"Cannot read {path}: {exc.strerror or exc}.") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path} is not a JSON overrides file: {exc}.") from None
    items = doc.get("overrides") if isinstance(doc, dict) else None
    if not isinstance(items, list) or not items:
        raise UsageError(f"{path} has no overrides list.", hint="See `caliper review --help`.")
    for n, item in enumerate(items, 1):
        ok = (
            isinstance(item, dict)
            and isinstance(item.get("task"), str)
            and isinstance(item.get("attempt"), int)
            and not isinstance(item.get("attempt"), bool)
            and item.get("verdict") in VERDICTS
            and isinstance(item.get("note"), str)
            and item["note"].strip()
        )
        if not ok:
            raise UsageError(
                f"{path}: override {n} needs task (text), attempt (a number), verdict "
                "(pass or fail) and a note.",
                hint="See `caliper review --help`.",
            )
    return doc


def apply_overrides(
    data: dict[str, Any], overrides: list[dict[str, Any]], reviewer: str, name: str
) -> list[dict[str, Any]]:
    """Every attempt of the stored run ``data``, those named in ``overrides`` with the
    reviewer's outcome and a ``review`` check; an override naming no attempt is an error."""
    wanted = {(o["task"], o["attempt"]): o for o in overrides}
    attempts, found = [], set()
    for task in data.get("tasks") or []:
        for attempt in task.get("attempts") or []:
            key = (task.get("name"), attempt.get("attempt"))
            override = wanted.get(key)
            if override is not None:
                found.add(key)
                attempt = dict(attempt)
                passed = override["verdict"] == "pass"
                attempt["outcome"] = VERDICTS[override["verdict"]]
                attempt["reason"] = None if passed else f"review: {override['note']}"
                attempt["checks"] = [
                    *(attempt.get("checks") or []),
                    {
                        "key": "review",
                        "passed": passed,
                        "reason": f"{reviewer}: {override['note']}",
                    },
                ]
            attempts.append(attempt)
    missing = [k for k in wanted if k not in found]
    if missing:
        task, number = missing[0]
        raise UsageError(
            f"Run {name} has no attempt {number} of task {task!r} "
            f"({len(missing)} override(s) name no attempt).",
            hint="Attempts are numbered from 1, as the report shows them.",
        )
    return attempts
