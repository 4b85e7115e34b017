"""Builders of hand-made runs shared by the results, report, compare and list tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from caliper.plugin.attempt import Usage
from caliper.results.models import (
    AttemptRecord,
    CheckRecord,
    Outcome,
    RunMeta,
    RunResults,
    SkillSnapshot,
    TaskResult,
)
from caliper.results.store import save_run

P, F, C = Outcome.PASS, Outcome.TASK_FAIL, Outcome.CHEAT
INFRA, TIMEOUT, JUDGE, NC = (
    Outcome.INFRA_ERROR,
    Outcome.TIMEOUT,
    Outcome.JUDGE_ERROR,
    Outcome.NOT_CHECKED,
)


def attempt(
    task: str,
    n: int,
    outcome: Outcome,
    *,
    usage: Usage | str | None = "default",
    duration: float | None = 10.0,
    activated: list[str] | None = None,
    activation_passed: bool | None = None,
    reason: str | None = None,
    final_answer: str | None = None,
) -> AttemptRecord:
    """One attempt. ``usage`` may be ``None``; by default 1000 in, 100 out, 200 cache read
    and 50 cache write tokens."""
    if usage == "default":
        usage = Usage(1000, 100, 200, 50)
    checks = []
    if outcome in (P, F):
        checks.append(CheckRecord(key="expect", passed=outcome is P, reason=reason))
    return AttemptRecord(
        task_name=task,
        attempt=n,
        outcome=outcome,
        reason=reason,
        duration_seconds=duration,
        usage=usage,
        final_answer=final_answer,
        activated=activated,
        activation_passed=activation_passed,
        checks=checks,
    )


def task(
    name: str,
    outcomes: Sequence[Outcome],
    *,
    index: int = 0,
    expected: list[str] | None = None,
    activated: Sequence[list[str] | None] | None = None,
    aborted: bool = False,
    **kwargs,
) -> TaskResult:
    """A task with one attempt per outcome; ``activated`` gives each attempt's loaded skills."""
    attempts = []
    for i, outcome in enumerate(outcomes):
        loaded = activated[i] if activated is not None else None
        verdict = None
        if expected is not None and loaded is not None:
            verdict = sorted(loaded) == sorted(expected)
        attempts.append(
            attempt(name, i + 1, outcome, activated=loaded, activation_passed=verdict, **kwargs)
        )
    check_keys = ["activates"] if expected is not None else []
    if any(o is not NC for o in outcomes):
        check_keys.append("expect")
    return TaskResult(
        name=name,
        index=index,
        k=len(outcomes),
        attempts=attempts,
        activation_expected=expected,
        check_keys=check_keys,
        aborted=aborted,
    )


def snapshot(name: str, *, kind: str = "path", ref: str = "aaaa111", ablated: bool = False):
    """A neighbourhood member; ``ref`` is its git sha (git) or content hash (path)."""
    return SkillSnapshot(
        name=name,
        source_kind=kind,
        declared_as=f"./{name}" if kind == "path" else f"git:{name}",
        path=f"/skills/{name}" if kind == "path" else None,
        git_repo="https://example.invalid/repo.git" if kind == "git" else None,
        git_sha=ref if kind == "git" else None,
        content_hash=ref if kind == "path" else f"c-{ref}",
        ablated=ablated,
    )


def run(
    tasks: Sequence[TaskResult],
    *,
    spec_name: str = "demo",
    run_id: str = "2026-11-30T18-01-33Z",
    k: int = 3,
    skills: Sequence[SkillSnapshot] | None = None,
    ablated: Sequence[str] = (),
    **meta,
) -> RunResults:
    """A run of ``tasks`` with sensible metadata (override any RunMeta field by keyword)."""
    if skills is None:
        skills = [snapshot("my-skill")]
    fields = dict(
        run_id=run_id,
        spec_name=spec_name,
        spec_path=f"/work/{spec_name}.eval.yaml",
        started_at="2026-11-30T18:01:33+00:00",
        finished_at="2026-11-30T18:03:00+00:00",
        backend="claude-code",
        model="claude-sonnet-5",
        k=k,
        ablated=list(ablated),
        skill_snapshots=list(skills),
        spec_hash="hash-1",
    )
    fields.update(meta)
    for i, t in enumerate(tasks):
        t.index = i
    return RunResults(meta=RunMeta(**fields), tasks=list(tasks))


CALIPER = Path(sys.executable).parent / "caliper"


def caliper(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Run the installed ``caliper`` script in ``cwd`` and capture its output.

    Without ``env``, the test's own environment minus ``COLUMNS`` (readline, once imported
    under pytest, exports ``COLUMNS=80`` behind ``os.environ``'s back), so text output has
    the width a pipe gets.
    """
    if env is None:
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.run(
        [str(CALIPER), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )


def make_project(folder: Path) -> Path:
    """Two specs and three saved runs in ``folder``: ``demo`` twice, ``other`` once."""
    previous = Path.cwd()
    os.chdir(folder)
    try:
        for name in ("demo", "other"):
            (folder / f"{name}.eval.yaml").write_text("tasks: []\n")
        spec = folder / "demo.eval.yaml"
        save_run(run([task("Writes a commit", [P, F, F]), task("Config", [P, P])]), spec_path=spec)
        save_run(
            run(
                [task("Writes a commit", [P, P, INFRA]), task("Config", [P, P])],
                run_id="2026-11-30T19-00-00Z",
            ),
            spec_path=spec,
        )
        save_run(
            run([task("x", [F])], spec_name="other", run_id="2026-11-30T17-00-00Z"),
            spec_path=folder / "other.eval.yaml",
        )
    finally:
        os.chdir(previous)
    return folder
