"""``caliper regrade RUN``: judge a saved run's attempts again, without running the agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from caliper.commands.attempt_options import judge_model_option, judge_timeout_option
from caliper.commands.confidence import confidence_option
from caliper.commands.output_options import results_output_option, verbose_option
from caliper.commands.run_setup import check_save_targets
from caliper.errors import CaliperError, UsageError
from caliper.host.plugins import PluginHost
from caliper.plugin.mcp import resolve_servers
from caliper.replay.regrade import JUDGED, Regrader, environ, spec_file_hash
from caliper.report import make_console
from caliper.report.run_view import render_run
from caliper.results import codec
from caliper.results.compact import StorageLimits
from caliper.results.journal import assemble
from caliper.results.store import (
    claim_results,
    load_run_data,
    new_run_id,
    release_claim,
    resolve_run_ref,
    save_assembled,
)
from caliper.runner.attempt.judge_calls import judge_engine_named
from caliper.runner.attempt.judging import FatalJudgeError, LazyEngine
from caliper.runner.run.meta import now_iso
from caliper.spec.load import load_spec

if TYPE_CHECKING:
    from caliper.plugin.tools import ToolNames

EPILOG = """\b
Examples:
  caliper regrade my-skill                        # the latest run, current expect:/assert:
  caliper regrade 2026-11-30T18-01-33Z --judge-model claude-code:claude-opus-4-5

\b
The spec's current checks are used, so a fixed expect: or assert: is applied to old
attempts. expect: and activates: re-grade from the saved transcript; assert: (and other
local checks) need the attempt's working directory, kept by `caliper run --keep-workdirs`.
The new run names its parent (parent_run) and what changed (changes).

\b
Exit codes:
  0  regraded, at least one attempt usable
  1  every attempt unusable, or the results could not be saved
  2  RUN not found, its spec is gone or invalid, an assert: without kept working
     directories, a kept working directory over a limit of the unpacker
     (CALIPER_UNPACK_MAX_BYTES, _RATIO, _ENTRIES), a --judge-model that cannot be resolved
  3  an MCP ${VAR} of the spec is unset
"""


@click.command(name="regrade", epilog=EPILOG)
@click.argument("ref", metavar="RUN")
@judge_model_option("Engine for LLM judges (expect:); default: the one the parent run asked for.")
@judge_timeout_option("Time budget of one judge call (default: the parent run's --timeout).")
@results_output_option()
@verbose_option()
@confidence_option
def command(
    ref: str,
    judge_model: str | None,
    judge_timeout: float | None,
    output: Path | None,
    verbose: bool,
    confidence: float,
) -> None:
    """Re-run the judges of the saved run RUN on its saved attempts and save a new run."""
    path = resolve_run_ref(ref, cwd=Path.cwd())
    data = load_run_data(path)
    meta = data["meta"]
    name = f"{meta.get('spec_name')}/{meta.get('run_id')}"
    spec_path = Path(meta.get("spec_path") or "")
    if not spec_path.is_file():
        raise UsageError(
            f"Cannot regrade run {name}: its spec {spec_path} is not there any more.",
            hint="Put the spec back where the run read it, then regrade.",
        )
    check_save_targets(spec_path, output)
    host = PluginHost()
    judges = host.judges()
    spec = load_spec(spec_path, judges)
    asked = _judge_asked(meta, judge_model)
    judge_engine = LazyEngine(lambda: judge_engine_named(host, asked))
    snapshots = meta.get("skill_snapshots") or []
    regrader = Regrader(
        spec=spec,
        judges=dict(judges),
        judge_engine=judge_engine,
        secrets=resolve_servers(spec.mcp, environ()).secrets,
        results_folder=path.parent,
        timeout=judge_timeout or float(meta.get("timeout") or 120.0),
        declared=tuple(s.get("name") for s in snapshots),
        installed=tuple(s.get("name") for s in snapshots if not s.get("ablated")),
        tools=_tool_names(host, meta.get("backend")),
    )
    todo, kept = _split_attempts(data, spec)
    _check_workdirs(regrader, todo, name)
    started = now_iso()
    regraded = _regrade_all(regrader, todo)
    new_meta = _new_meta(meta, name, len(todo), spec_path, judge_engine.engine, asked, started)
    results, saved = _save(path, data, new_meta, [*kept, *regraded], output)
    _show(results, saved, verbose, confidence)


def _tool_names(host: PluginHost, backend_id: object) -> ToolNames | None:
    """The tool vocabulary of the run's backend, or ``None`` when it is not installed (a
    ``tools:`` check is then a judge error, never a guess)."""
    if not isinstance(backend_id, str):
        return None
    try:
        backend = host.backends([backend_id]).get(backend_id)
    except Exception:  # a backend that cannot load leaves tools: undecided, as documented
        return None
    return backend.tool_names() if backend is not None else None


def _judge_asked(meta: dict, judge_model: str | None) -> str | None:
    """The judge engine to regrade with: ``--judge-model``, else the one the parent run
    asked for, else (its judge followed its ``--model``) the engine that graded it."""
    asked = judge_model if judge_model is not None else meta.get("judge_requested")
    if asked:
        return asked
    return (
        ":".join(part for part in (meta.get("judge_backend"), meta.get("judge_model")) if part)
        or meta.get("requested_model")
        or meta.get("backend")
    )


def _split_attempts(data: dict, spec) -> tuple[list, list]:
    """The saved attempts as ``(todo, kept)``: ``todo`` the judged ones of a task the spec
    still has, with that task; ``kept`` the rest, copied over unchanged."""
    tasks = {task.name: task for task in spec.tasks}
    judged_outcomes = {o.value for o in JUDGED}
    todo, kept = [], []
    for task_data in data.get("tasks") or []:
        for attempt in task_data.get("attempts") or []:
            task = tasks.get(task_data.get("name"))
            judged = attempt.get("outcome") in judged_outcomes
            if task is not None and judged and not attempt.get("setup_failed"):
                todo.append((task, attempt))
            else:
                kept.append(attempt)
    return todo, kept


def _check_workdirs(regrader, todo: list, name: str) -> None:
    """A usage error when a local check needs a working directory that was not kept."""
    missing = regrader.missing_workdirs(todo)
    if missing:
        raise UsageError(
            f"Cannot regrade run {name}: its assert: (or other local) checks need each "
            f"attempt's working directory, and none was kept for {', '.join(missing[:5])}"
            + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            + ".",
            hint="Run the spec with `caliper run --keep-workdirs` to regrade such checks later.",
        )


def _regrade_all(regrader, todo: list) -> list[dict]:
    """Each attempt of ``todo`` judged again, as saved data; a fatal judge error ends it."""
    limits = StorageLimits()
    regraded = []
    try:
        for task, attempt in todo:
            record = regrader.regrade(task, codec.attempt_from_data(attempt))
            regraded.append(codec.attempt_data(record, limits))
    except FatalJudgeError as exc:
        raise exc.error from None
    return regraded


def _new_meta(
    meta: dict, name: str, count: int, spec_path: Path, engine, asked: str | None, started: str
) -> dict:
    """The new run's metadata: the parent's, naming it and what changed (``count`` attempts
    judged again, the spec's hash, the judge ``engine`` if one was resolved)."""
    new_meta = dict(meta)
    changes = [f"judges re-run on {count} attempt(s) with the spec's current checks"]
    now_hash = spec_file_hash(spec_path)
    if meta.get("spec_hash") and meta["spec_hash"] != now_hash:
        changes.append(
            f"spec changed since the parent run (SHA-256 {meta['spec_hash'][:12]}… → "
            f"{now_hash[:12]}…)"
        )
    if engine is not None:
        before = ":".join(p for p in (meta.get("judge_backend"), meta.get("judge_model")) if p)
        after = ":".join(p for p in (engine.backend_id, engine.model) if p)
        if before != after:
            changes.append(f"judge engine {before or 'none'} → {after}")
        new_meta.update(judge_backend=engine.backend_id, judge_model=engine.model)
    new_meta.update(
        parent_run=name,
        derived_by="regrade",
        changes=changes,
        spec_hash=now_hash,
        judge_requested=asked,
        started_at=started,
        finished_at=now_iso(),
        resumed_at=[],
        incomplete=False,
        gate=None,  # the parent's verdicts were judged on its grades, not these
    )
    return new_meta


def _save(path: Path, data: dict, new_meta: dict, attempts: list, output: Path | None):
    """Save the new run beside its parent ``path`` (and to ``output``); its results and the
    file it was saved to."""
    target, run_id = claim_results(path.parent, new_run_id())
    try:
        new_meta["run_id"] = run_id
        task_headers = [{k: v for k, v in t.items() if k != "attempts"} for t in data["tasks"]]
        assembled = assemble(
            new_meta,
            task_headers,
            attempts,
            {t["name"] for t in data["tasks"] if t.get("aborted")},
        )
        text = codec.dumps_data(assembled)
        results = codec.from_data(json.loads(text))
        saved = save_assembled(text, results, path=target, output=output)
    except BaseException:  # Ctrl-C or a failed save: give the claimed name back
        release_claim(target)
        raise
    return results, saved


def _show(results, saved: Path, verbose: bool, confidence: float) -> None:
    render_run(results, make_console(), verbose=verbose, path=saved, confidence=confidence)
    records = [a for task in results.tasks for a in task.attempts]
    if records and not any(r.outcome.usable or r.outcome.value == "not_checked" for r in records):
        raise CaliperError(
            "Every attempt was unusable (infra_error, timeout or judge_error), so no success "
            "rate could be measured.",
            exit_code=1,
        )
