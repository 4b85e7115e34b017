"""The bundled skills (``skills/``) install with the ecosystem's installer and pass their own spec.

* ``npx skills add <repo>`` (npm ``skills``, pinned in ``caliper.testing.agent_clis``) finds
  exactly the two bundled skills in this repository and installs them, unchanged, where Claude
  Code, Codex, pi and Hermes read user skills; it runs offline from the local checkout.
* ``skills/caliper-skills.eval.yaml`` runs green through the real ``claude`` CLI played by a
  correct scripted agent (``skills/scripted-model.yaml``), and fails for the right reasons when
  the scripted agent has the failures the spec is for (``skills/scripted-model.broken.yaml``):
  the same files ``python -m caliper.testing.example skills`` runs.

Run with ``python -m caliper.testing.offline -- pytest tests/examples/test_bundled_skills_e2e.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from caliper.testing.example import example_spec, scripted_model
from caliper.testing.harness import CaliperRun, FakeRealHome, find_agent_cli, run_caliper_process
from caliper.testing.model_server import ModelServer

ROOT = Path(__file__).resolve().parents[2]
SKILLS = ROOT / "skills"
BUNDLED = ("evaluate-skill", "grill-skill")

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


# --- npx skills add ------------------------------------------------------------------------


def _installer(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The pinned ``skills`` installer run with ``args`` in an empty project, HOME in tmp_path."""
    cli = find_agent_cli("skills", tmp_path / "bin")
    if isinstance(cli, str):
        pytest.skip(cli)
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir(exist_ok=True)
    project.mkdir(exist_ok=True)
    keep = ("PATH", "LANG", "TMPDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(HOME=str(home), DISABLE_TELEMETRY="1", DO_NOT_TRACK="1", NO_COLOR="1", CI="1")
    return subprocess.run(
        [str(cli.path), *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_installer_finds_exactly_the_bundled_skills(tmp_path: Path) -> None:
    done = _installer(tmp_path, "add", str(ROOT), "--list")
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "Found 2 skills" in out, out
    for name in BUNDLED:
        assert name in out, out
    # the starter pack's own skills (examples/*/skills/) are not offered as Caliper's
    assert "config-editor" not in out and "commit-message" not in out, out


def test_the_installer_installs_them_for_every_agent(tmp_path: Path) -> None:
    agents = ("claude-code", "codex", "pi", "hermes-agent")
    args = ["add", str(ROOT), "-g", "-y", "--copy", "--skill", *BUNDLED]
    done = _installer(tmp_path, *args, *(a for agent in agents for a in ("-a", agent)))
    assert done.returncode == 0, done.stdout + done.stderr
    home = tmp_path / "home"
    for folder in (
        home / ".claude" / "skills",
        home / ".agents" / "skills",
        home / ".hermes" / "skills",
    ):
        assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == sorted(BUNDLED), folder
        for name in BUNDLED:
            installed = sorted(p.name for p in (folder / name).iterdir())
            assert installed == ["SKILL.md"], (folder, installed)
            text = (folder / name / "SKILL.md").read_text(encoding="utf-8")
            assert text == (SKILLS / name / "SKILL.md").read_text(encoding="utf-8"), name


# --- skills/caliper-skills.eval.yaml ---------------------------------------------------------


def _run_spec(tmp_path: Path, broken: bool) -> CaliperRun:
    """``caliper run`` of a copy of ``skills/``, its scripted model playing the agent."""
    cli = find_agent_cli("claude", tmp_path / "bin")
    if isinstance(cli, str):
        pytest.skip(cli)
    project = tmp_path / "skills"
    shutil.copytree(SKILLS, project, ignore=shutil.ignore_patterns(".caliper"))
    with ModelServer(scripted_model(project, broken=broken)) as server:
        run = run_caliper_process(
            "run",
            example_spec(project),
            "--model",
            "claude-code",
            "--k",
            "1",
            home=FakeRealHome(tmp_path / "home"),
            cwd=project,
            sandbox_parent=tmp_path / "sandboxes",
            path=cli.path_env(),
            env={
                "CLAUDE_CLI_PATH": str(cli.path),
                "ANTHROPIC_BASE_URL": server.url,
                "ANTHROPIC_API_KEY": "sk-bundled-skills",
                "CLAUDE_CODE_MAX_RETRIES": "0",
            },
            timeout=240,
        )
        unmatched = [str(r.answered_by) for r in server.model_requests() if r.outcome == "fallback"]
    assert not unmatched, unmatched
    return run


def test_the_bundled_skills_pass_their_spec(tmp_path: Path) -> None:
    run = _run_spec(tmp_path, broken=False)
    assert run.returncode == 0, run.describe()
    tasks = run.tasks()
    assert len(tasks) == 4, run.describe()
    for task in tasks:
        for attempt in task["attempts"]:
            where = f"{task['name']}: {attempt.get('reason')}\n{run.describe()}"
            if task["check_keys"] != ["activates"]:
                assert attempt["outcome"] == "pass", where
            assert attempt["activation_passed"] is True, where


def test_the_spec_catches_a_skill_that_stays_quiet_loads_wrongly_or_writes_a_bad_spec(
    tmp_path: Path,
) -> None:
    run = _run_spec(tmp_path, broken=True)
    assert run.returncode == 0, run.describe()  # measured failures, not an unusable run

    def activation(task: str) -> str:
        (attempt,) = run.attempts(task)
        assert attempt["activation_passed"] is False, attempt
        return {c["key"]: c for c in attempt["checks"]}["activates"]["reason"]

    assert "missing: [evaluate-skill]" in activation("asked whether a skill is any good")
    assert "unexpected: [evaluate-skill]" in activation("unrelated work loads neither")
    (wrote,) = run.attempts("asked for evals, writes a spec that validates")
    assert wrote["outcome"] == "task_fail", wrote
    assert "caliper validate rejects commit-helper.eval.yaml" in wrote["reason"], wrote
    assert "'comit-helper' is not a declared skill" in wrote["reason"], wrote
    (kept,) = run.attempts("asked whether an edit made a skill worse")
    assert kept["activation_passed"] is True, kept  # only what the broken agent got wrong fails
