"""Hand-made runs for the HTML report tests, and a way to run the real ``caliper`` script."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from page_support import page_attempts as page_attempts  # re-exported for the report tests
from page_support import page_text as page_text

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

CALIPER = Path(sys.executable).parent / "caliper"

PAYLOADS = (
    "<script>alert(1)</script>",
    "</textarea><img src=x onerror=alert(1)>",
    "</script>",
    "{{ 7*7 }}",
    "<!-- comment -->",
)
"""Text an agent or a spec author could write that must show literally and never run."""
PAYLOAD = " ".join(PAYLOADS)


def caliper(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run the installed ``caliper`` console script in ``cwd``."""
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run(
        [str(CALIPER), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def transcript(skill: str | None, *, output: str = "OUT-42", extra: str = "") -> list[Turn]:
    """Assistant text, a skill load (when ``skill``), a shell call and a closing answer."""
    turns = [Turn("assistant", f"Let me look. {extra}".strip())]
    if skill:
        turns.append(
            Turn("tool", tool_name="Skill", tool_input={"skill": skill}, tool_output="Loaded.")
        )
    turns.append(
        Turn(
            "tool",
            tool_name="Bash",
            tool_input={"command": "printf 'OUT-%s' 42"},
            tool_output=output,
            is_error=False,
        )
    )
    turns.append(Turn("assistant", "Done."))
    return turns


def attempt(
    task: str,
    n: int,
    outcome: Outcome,
    *,
    activated: list[str] | None = None,
    expected: list[str] | None = None,
    reason: str | None = None,
    turns: list[Turn] | None = None,
    answer: str = "Done.",
) -> AttemptRecord:
    """One attempt with a transcript, usage, an ``expect`` verdict and activation."""
    checks = []
    if outcome in (Outcome.PASS, Outcome.TASK_FAIL):
        checks.append(
            CheckRecord(
                key="expect",
                passed=outcome is Outcome.PASS,
                reason=reason or ("Says 42." if outcome is Outcome.PASS else "Says 41, not 42."),
                backend="claude-code",
                model="judge-1",
            )
        )
    verdict = None
    if expected is not None and activated is not None:
        verdict = sorted(activated) == sorted(expected)
        checks.append(CheckRecord(key="activates", passed=verdict))
    return AttemptRecord(
        task_name=task,
        attempt=n,
        outcome=outcome,
        reason=reason if outcome is not Outcome.PASS else None,
        duration_seconds=4.0 + n,
        usage=Usage(1000, 100, 200, 50),
        final_answer=answer,
        transcript=turns if turns is not None else transcript((activated or [None])[0]),
        activated=activated,
        activation_passed=verdict,
        checks=checks,
        model="claude-sonnet-5",
    )


def task(
    name: str,
    outcomes: Sequence[Outcome],
    *,
    index: int = 0,
    expected: list[str] | None = None,
    activated: Sequence[list[str] | None] | None = None,
) -> TaskResult:
    """A task with one attempt per outcome."""
    attempts = [
        attempt(
            name,
            i + 1,
            outcome,
            activated=activated[i] if activated is not None else None,
            expected=expected,
        )
        for i, outcome in enumerate(outcomes)
    ]
    return TaskResult(
        name=name,
        index=index,
        k=len(outcomes),
        attempts=attempts,
        activation_expected=expected,
        check_keys=["expect"] + (["activates"] if expected is not None else []),
    )


def snapshot(name: str, *, description: str = "Does things.", ablated: bool = False):
    """A path-sourced neighbourhood member."""
    return SkillSnapshot(
        name=name,
        source_kind="path",
        declared_as=f"./skills/{name}",
        path=f"/skills/{name}",
        content_hash=hashlib.sha256(name.encode()).hexdigest(),
        description=description,
        ablated=ablated,
    )


def run(
    tasks: Sequence[TaskResult],
    *,
    spec_name: str = "demo",
    run_id: str = "2026-11-30T18-01-33Z",
    skills: Sequence[SkillSnapshot] | None = None,
    **meta,
) -> RunResults:
    """A run of ``tasks`` with full metadata (override any RunMeta field by keyword)."""
    fields = dict(
        run_id=run_id,
        spec_name=spec_name,
        spec_path=f"/work/{spec_name}.eval.yaml",
        started_at=run_id[:10] + "T" + run_id[11:19].replace("-", ":") + "+00:00",
        finished_at=None,
        backend="claude-code",
        model="claude-sonnet-5",
        judge_backend="claude-code",
        judge_model="judge-1",
        caliper_version="0.1.0",
        cli_version="2.1.0",
        plugin_versions={"caliper-backend-claude": "0.1.0"},
        k=max((len(t.attempts) for t in tasks), default=1),
        skill_snapshots=list(skills if skills is not None else [snapshot("git-commit")]),
        spec_hash="spec-hash-1",
    )
    fields.update(meta)
    for i, t in enumerate(tasks):
        t.index = i
    return RunResults(meta=RunMeta(**fields), tasks=list(tasks))


P, F, INFRA = Outcome.PASS, Outcome.TASK_FAIL, Outcome.INFRA_ERROR


def demo_run(**meta) -> RunResults:
    """Three tasks, two skills: a pass, a partial with a miss, and a false alarm."""
    return run(
        [
            task(
                "Writes a commit",
                [P, F, P],
                expected=["git-commit"],
                activated=[["git-commit"], [], ["git-commit"]],
            ),
            task("Config file", [P, P, INFRA], expected=[], activated=[[], ["git-commit"], None]),
            task("Plain answer", [F, F, F]),
        ],
        skills=[snapshot("git-commit"), snapshot("other-skill")],
        **meta,
    )


def save(results: RunResults, folder: Path) -> Path:
    """Write ``results`` as ``<folder>/<run_id>.json`` (the store's file format)."""
    from caliper.results import codec

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{results.meta.run_id}.json"
    path.write_text(codec.dumps(results), encoding="utf-8")
    return path
