"""The attempt environment: each step runs once and is remembered, made-ahead steps are not
redone, and cleanup removes what was made (and is safe when nothing was)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from caliper.plugin.sandbox import finish_removals
from caliper.runner.attempt.environment import AttemptEnvironment


class _Backend:
    """Counts its HOME seedings."""

    id = "fake"

    def __init__(self, fail: bool = False) -> None:
        self.seeded = 0
        self.fail = fail

    def prepare_home(self, sandbox: Any) -> str:
        self.seeded += 1
        if self.fail:
            raise RuntimeError("no login")
        (sandbox.home / "seeded").write_text("yes")
        return "state"


class _Installer:
    """Counts its installs."""

    def __init__(self) -> None:
        self.calls = 0

    def install(self, skills: Any, sandbox: Any) -> list[Any]:
        self.calls += 1
        return []


def _run(tmp_path: Path, backend: _Backend | None = None) -> Any:
    """What an :class:`AttemptEnvironment` needs of a prepared run."""
    return SimpleNamespace(
        spec=SimpleNamespace(directory=tmp_path, sandbox=SimpleNamespace(extra_path=())),
        sandbox_parent=tmp_path,
        installer=_Installer(),
        installed_skills=["one"],
        translator=None,
        mcp=SimpleNamespace(servers=()),
        engine=SimpleNamespace(backend=backend or _Backend()),
    )


def _boxes(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("caliper-"))


def test_each_step_runs_once_and_is_remembered(tmp_path):
    run = _run(tmp_path)
    env = AttemptEnvironment(run)
    first = env.sandbox()
    assert env.sandbox() is first
    assert env.installed_skills() is env.installed_skills()
    assert run.installer.calls == 1
    seeded = env.seeded_home()
    assert env.seeded_home() is seeded
    assert run.engine.backend.seeded == 1
    assert seeded.root == first.root and seeded.seeded is not None
    assert seeded.seeded.state == "state"
    assert env.sandbox() is seeded  # the later steps see the seeded sandbox
    assert _boxes(tmp_path) == [first.root.name]
    env.cleanup()
    env.cleanup()
    finish_removals()
    assert _boxes(tmp_path) == []


def test_a_fresh_environment_leaves_the_seeding_to_the_backend(tmp_path):
    env = AttemptEnvironment(_run(tmp_path))
    assert env.sandbox().seeded is None
    env.cleanup()
    finish_removals()


def test_steps_made_ahead_are_not_redone(tmp_path):
    run = _run(tmp_path)
    env = AttemptEnvironment(run).prepare_ahead(install=True, judge_backend=None, with_judge=False)
    sandbox = env.sandbox()
    assert sandbox.seeded is not None
    assert env.installed_skills().failure is None
    assert run.installer.calls == 1 and run.engine.backend.seeded == 1
    env.cleanup()
    finish_removals()
    assert _boxes(tmp_path) == []


def test_a_bare_sandbox_made_ahead_installs_later(tmp_path):
    run = _run(tmp_path)
    env = AttemptEnvironment(run).prepare_ahead(install=False, judge_backend=None, with_judge=False)
    assert run.installer.calls == 0 and env.sandbox().seeded is None
    env.installed_skills()
    assert run.installer.calls == 1
    env.cleanup()
    finish_removals()


def test_cleanup_with_nothing_made_does_nothing(tmp_path):
    env = AttemptEnvironment(_run(tmp_path))
    env.cleanup()
    assert _boxes(tmp_path) == []


def test_a_step_failing_ahead_removes_what_was_made(tmp_path):
    env = AttemptEnvironment(_run(tmp_path, _Backend(fail=True)))
    with pytest.raises(RuntimeError, match="no login"):
        env.prepare_ahead(install=True, judge_backend=None, with_judge=False)
    finish_removals()
    assert _boxes(tmp_path) == []


def test_the_judge_box_made_ahead_is_taken_by_the_first_judge_call_only(tmp_path):
    judge = _Backend()
    env = AttemptEnvironment(_run(tmp_path)).prepare_ahead(
        install=True, judge_backend=judge, with_judge=True
    )
    env.judge_box(judge)  # already made: not made again
    assert judge.seeded == 1
    inside = [p for p in env.sandbox().root.iterdir() if p.name.startswith("judge-")]
    assert len(inside) == 1
    with env.judge_sandbox() as first:
        assert first.root == inside[0]
        assert (first.home / "seeded").read_text() == "yes"
    with env.judge_sandbox() as second:
        assert second.root != first.root and second.root.parent == env.sandbox().root
    env.cleanup()
    finish_removals()
    assert _boxes(tmp_path) == []
