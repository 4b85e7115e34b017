"""The starter pack (``examples/``) never rots: each example spec runs green, as shipped,
through the real ``caliper`` script and the real pinned ``claude`` CLI, whose model is a
scripted server playing a correct agent (``models/<example>.yaml``).

Each example is copied to a temporary folder first, so results never land in the repository.
Run with ``python -m caliper.testing.offline -- pytest tests/examples``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from caliper.testing.harness import (
    CaliperRun,
    FakeRealHome,
    caliper_executable,
    find_agent_cli,
    run_caliper_process,
)
from caliper.testing.model_server import ModelServer

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
MODELS = Path(__file__).parent / "models"
PACK = ("false-success", "tool-misuse", "runaway-loops", "prompt-regression", "context-boundary")


def test_every_example_has_a_page_and_a_model():
    """Each example folder of the pack has its spec, a README page and a CI model script."""
    for name in PACK:
        folder = EXAMPLES / name
        assert (folder / f"{name}.eval.yaml").is_file(), name
        assert (folder / "README.md").is_file(), name
        assert list((folder / "skills").glob("*/SKILL.md")), name
        assert (MODELS / f"{name}.yaml").is_file(), name
        assert "# <--" in (folder / f"{name}.eval.yaml").read_text(), f"{name}: no lines to change"


CAUGHT = {
    "false-success": ("sets the port and keeps the other settings", "port is 3000, not 8080"),
    "tool-misuse": ("deletes an old log through the wrapper", "the raw tool was used"),
    "runaway-loops": ("polls the deploy a bounded number of times", "called 6 times"),
    "prompt-regression": ("a bug fix is logged under Fixed", "- fixed: Crash on empty input."),
    "context-boundary": ("release notes belong to the neighbour", "unexpected: [commit-message]"),
}
"""Per example: the task that must fail when a broken agent plays it, and why."""


def _run_example(tmp_path: Path, name: str, model: str) -> tuple[CaliperRun, list[str]]:
    """``caliper run`` of a fresh copy of the example, ``model`` playing the agent."""
    cli = find_agent_cli("claude", tmp_path / "bin")
    if isinstance(cli, str):
        pytest.skip(cli)
    project = tmp_path / name
    shutil.copytree(EXAMPLES / name, project, symlinks=True)
    spec = project / f"{name}.eval.yaml"
    with ModelServer(MODELS / model) as server:
        run = run_caliper_process(
            "run",
            spec,
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
                "ANTHROPIC_API_KEY": "sk-examples",
                "CLAUDE_CODE_MAX_RETRIES": "0",
            },
            timeout=240,
        )
        unmatched = [str(r.answered_by) for r in server.model_requests() if r.outcome == "fallback"]
    return run, unmatched


def test_every_example_is_a_valid_spec():
    """``caliper validate`` accepts every spec of the pack (no agent CLI needed)."""
    specs = [str(EXAMPLES / name / f"{name}.eval.yaml") for name in PACK]
    out = subprocess.run(
        [str(caliper_executable()), "validate", *specs],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("✓") == len(PACK), out.stdout


@pytest.mark.e2e
@pytest.mark.parametrize("name", PACK)
def test_example_runs_green_through_claude(tmp_path: Path, name: str) -> None:
    """As shipped, with a correct agent, every task passes and every activation holds."""
    run, unmatched = _run_example(tmp_path, name, f"{name}.yaml")
    assert run.returncode == 0, run.describe()
    attempts = run.attempts()
    assert attempts, run.describe()
    for task in run.tasks():
        for attempt in task["attempts"]:
            where = f"{task['name']}: {attempt.get('reason')}\n{run.describe()}"
            if task["check_keys"] != ["activates"]:
                assert attempt["outcome"] == "pass", where
            if task["activation_expected"] is not None:
                assert attempt["activation_passed"] is True, where
    assert not unmatched, unmatched
    assert not run.home_changes, run.home_changes


@pytest.mark.e2e
@pytest.mark.parametrize("name", PACK)
def test_example_catches_its_failure(tmp_path: Path, name: str) -> None:
    """Played by an agent with the failure the example is about, its task fails, saying why."""
    task_name, why = CAUGHT[name]
    run, _ = _run_example(tmp_path, name, f"{name}.broken.yaml")
    assert run.returncode == 0, run.describe()  # a measured failure, not an unusable run
    (attempt,) = run.attempts(task_name)
    checks = {c["key"]: c for c in attempt["checks"]}
    if set(checks) == {"activates"}:
        assert attempt["activation_passed"] is False, attempt
        assert why in checks["activates"]["reason"], checks["activates"]
    else:
        assert attempt["outcome"] == "task_fail", attempt
        assert why in attempt["reason"], attempt["reason"]
