"""Read, never write, the saved runs of the earlier tool (PyPI's ``caliper-eval`` up to 0.21).

The earlier tool filed runs at the same place (``.caliper/results/SPEC/RUN-ID.json``, the
same run-id form), but each file holds ``{"run": …, "skill_snapshots": …, "task_results": …,
"aggregate": …}`` instead of this format's ``{"meta": …, "tasks": …}``. :func:`is_legacy`
recognises such a file and :func:`from_legacy` turns it into a :class:`RunResults` in memory,
so ``list``, ``report`` and ``compare`` show it like any run. Its stored scores are not read:
every score is derived from the attempts, as for every run. Such a run has
``meta.schema_version`` :data:`LEGACY_SCHEMA`, which the report header names; commands that
would write a run from it (``retry``, ``regrade``, ``merge``, ``run --resume``) refuse it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from caliper.plugin.attempt import Turn, Usage
from caliper.results.models import (
    AttemptRecord,
    CheckRecord,
    Outcome,
    RunMeta,
    RunResults,
    SkillSnapshot,
    TaskResult,
)

LEGACY_SCHEMA = 0
"""``meta.schema_version`` of a run read from the earlier tool's format."""

LEGACY_NAME = "the earlier caliper-eval (0.21 or before)"

_OUTCOMES = ("pass", "task_fail", "cheat", "infra_error", "timeout", "judge_error", "not_checked")


def is_legacy(data: Any) -> bool:
    """Whether parsed results ``data`` is a run saved by the earlier tool."""
    return (
        isinstance(data, dict)
        and "meta" not in data
        and isinstance(data.get("run"), dict)
        and isinstance(data.get("task_results"), list)
        and "spec" in data["run"]
    )


class LegacyDecodeError(ValueError):
    """A file has the earlier tool's shape but a field it cannot hold."""


def from_legacy(data: dict[str, Any], path: Path, *, transcripts: bool = True) -> Any:
    """The earlier tool's run ``data`` (read from ``path``) as a :class:`RunResults`."""
    try:
        meta = _meta(data["run"], data.get("skill_snapshots") or [], path)
        tasks = [
            TaskResult(
                name=_text(task["task_name"]),
                index=index,
                k=meta.k,
                attempts=[_attempt(task, a, data["run"], transcripts) for a in task["attempts"]],
                activation_expected=task.get("activation_expected"),
                check_keys=_check_keys(task),
            )
            for index, task in enumerate(data["task_results"])
        ]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise LegacyDecodeError(f"a field of {LEGACY_NAME}'s run cannot be read ({exc})") from None
    return RunResults(meta=meta, tasks=tasks)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected text, found {type(value).__name__}")
    return value


def _meta(run: dict[str, Any], snapshots: list[dict[str, Any]], path: Path) -> Any:
    ablated = [a for a in run.get("ablated") or [] if isinstance(a, str)]
    skills = [a for a in ablated if not a.startswith("mcp:")]
    servers = [a[len("mcp:") :] for a in ablated if a.startswith("mcp:")]
    kept = [
        SkillSnapshot(
            name=snap.get("name") or "",
            source_kind=snap.get("source_kind") or "path",
            declared_as=snap.get("path") or "",
            path=snap.get("path"),
            git_repo=snap.get("git_repo"),
            git_sha=snap.get("git_sha"),
            content_hash=_digest(snap.get("files") or {}),
        )
        for snap in snapshots
    ]
    kept += [
        SkillSnapshot(name=name, source_kind="path", declared_as=name, ablated=True)
        for name in skills
        if name not in {s.name for s in kept}
    ]
    k = run["k"]
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"k is {k!r}")
    user_setup = run.get("loaded_user_customizations")
    return RunMeta(
        run_id=path.stem,
        spec_name=_text(run["spec"]),
        spec_path=f"{run['spec']}.eval.yaml",
        started_at=_text(run["timestamp"]),
        backend=run.get("backend"),
        model=run.get("model"),
        judge_backend=run.get("judge_backend"),
        judge_model=run.get("judge_model"),
        judge_prompt_version=run.get("judge_prompt_version"),
        cli_version=run.get("cli_version"),
        k=k,
        ablated=skills,
        ablated_mcp=servers,
        user_customizations=bool(run.get("user_customizations")),
        user_setup=_user_setup(user_setup),
        skill_snapshots=kept,
        partial=bool(run.get("interrupted")),
        stop_reason="the run was interrupted" if run.get("interrupted") else None,
        schema_version=LEGACY_SCHEMA,
    )


def _user_setup(names: Any) -> dict[str, list[str]]:
    """The earlier tool's kind-prefixed names (``mcp:x``, ``skill:y``) grouped by kind."""
    grouped: dict[str, list[str]] = {}
    for name in names if isinstance(names, list) else []:
        if isinstance(name, str):
            kind, _, rest = name.partition(":")
            key = {"mcp": "mcp", "skill": "skills", "plugin": "plugins"}.get(kind, kind)
            grouped.setdefault(key if rest else "other", []).append(rest or name)
    return grouped


def _digest(files: dict[str, Any]) -> str | None:
    """One hash over a snapshot's per-file hashes (as the earlier tool compared skills)."""
    import hashlib

    if not files:
        return None
    joined = "\n".join(
        f"{rel}:{snap.get('hash')}" for rel, snap in sorted(files.items()) if isinstance(snap, dict)
    )
    return hashlib.sha256(joined.encode()).hexdigest()


def _check_keys(task: dict[str, Any]) -> list[str]:
    attempts = task.get("attempts") or []
    keys = []
    if any(a.get("assert_passed") is not None or a.get("assert_evidence") for a in attempts):
        keys.append("assert")
    if task.get("expect") or any(a.get("autorater_passed") is not None for a in attempts):
        keys.append("expect")
    if task.get("activation_expected") is not None:
        keys.append("activates")
    return keys


def _attempt(task: dict[str, Any], data: dict[str, Any], run: dict[str, Any], transcripts: bool):
    outcome = data["outcome"]
    if outcome not in _OUTCOMES:
        raise ValueError(f"unknown outcome {outcome!r}")
    checks = []
    if data.get("assert_passed") is not None or data.get("assert_evidence"):
        checks.append(
            CheckRecord(
                key="assert", passed=data.get("assert_passed"), reason=data.get("assert_evidence")
            )
        )
    if data.get("autorater_passed") is not None or data.get("autorater_reasoning"):
        checks.append(
            CheckRecord(
                key="expect",
                passed=data.get("autorater_passed"),
                reason=data.get("autorater_reasoning"),
                backend=run.get("judge_backend"),
                model=run.get("judge_model"),
                prompt_version=run.get("judge_prompt_version"),
            )
        )
    usage = data.get("usage")
    hooks = data.get("hook_failures") or []
    evidence = [e for e in data.get("cheat_evidence") or [] if isinstance(e, str)]
    return AttemptRecord(
        task_name=_text(task["task_name"]),
        attempt=data["attempt"],
        outcome=Outcome(outcome),
        reason=_reason(outcome, data, checks, evidence, hooks),
        duration_seconds=data.get("duration_seconds"),
        usage=Usage(
            input_tokens=usage.get("input_tokens"),
            output_tokens=usage.get("output_tokens"),
            cache_read_tokens=usage.get("cache_read_tokens"),
            cache_creation_tokens=usage.get("cache_creation_tokens"),
        )
        if isinstance(usage, dict)
        else None,
        final_answer=data.get("output"),
        transcript=_transcript(data.get("transcript")) if transcripts else None,
        activated=data.get("activated"),
        activation_passed=data.get("activation_passed"),
        checks=checks,
        model=run.get("model"),
        setup_failed=any(h.get("phase") == "setup" for h in hooks if isinstance(h, dict)),
        forbidden_reads=evidence,
        built_in=list(data.get("builtin_activated") or []),
    )


def _reason(outcome: str, data: dict[str, Any], checks: list, evidence: list[str], hooks: list):
    """One line on why an attempt did not pass, from what the earlier tool recorded."""
    if outcome == "pass":
        return None
    if outcome == "cheat" and evidence:
        return "read a forbidden file: " + ", ".join(evidence)
    for hook in hooks:
        if isinstance(hook, dict):
            return f"{hook.get('phase')} exited with status {hook.get('exit_code')}"
    for check in checks:
        if check.passed is False and check.reason:
            return check.reason
    if outcome in ("infra_error", "timeout", "judge_error"):
        output = (data.get("output") or "").strip()
        return output.splitlines()[-1][:500] if output else outcome.replace("_", " ")
    return None


def _transcript(turns: Any) -> list[Any] | None:
    """The earlier tool's transcript (``tool_use`` and ``tool_result`` turns apart) as this
    format's turns (one ``tool`` turn holding the call and its output)."""
    if not isinstance(turns, list):
        return None
    out: list[Turn] = []
    for turn in turns:
        if not isinstance(turn, dict):
            continue
        role = turn.get("role")
        if role == "tool_use" or (role == "assistant" and turn.get("tool_name")):
            out.append(
                Turn(
                    role="tool",
                    tool_name=turn.get("tool_name"),
                    tool_input=turn.get("tool_input"),
                    tool_output=turn.get("tool_output"),
                )
            )
        elif role == "tool_result":
            pending = next(
                (t for t in reversed(out) if t.role == "tool" and t.tool_output is None), None
            )
            if pending is not None:
                index = out.index(pending)
                out[index] = Turn(
                    role="tool",
                    tool_name=pending.tool_name,
                    tool_input=pending.tool_input,
                    tool_output=turn.get("tool_output") or turn.get("content") or "",
                )
        elif role in ("user", "assistant"):
            out.append(Turn(role=role, content=turn.get("content")))
    return out
