"""The examples (``examples/``) never rot: each example spec runs green, as shipped, through
the real ``caliper`` script and the real pinned ``claude`` CLI, whose model is a scripted
server playing a correct agent (``examples/<example>/scripted-model.yaml``), and fails for the
right reason when it plays an agent with the example's failure (``scripted-model.broken.yaml``):
the same files ``python -m caliper.testing.example examples/<example>`` runs.

The backend-neutral examples also run through the real pinned ``gemini`` CLI: the same scripts
with their tool calls in Gemini CLI's names (``Skill`` -> ``activate_skill``, ``Bash`` ->
``run_shell_command``), mid-conversation's planted conversation included.

Each example is copied to a temporary folder first, so results never land in the repository.
Run with ``python -m caliper.testing.offline -- pytest tests/examples``.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from caliper.testing.example import example_spec, scripted_model
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
PACK = ("false-success", "tool-misuse", "runaway-loops", "prompt-regression", "context-boundary")
"""The starter pack: ready-to-copy specs, each with a page and lines marked to change."""
SPEC_EXAMPLES = (*PACK, "mid-conversation", "hello")
"""Every example that is a spec (the rest, such as backend-opencode, are plugin packages)."""
PLUGIN_EXAMPLES = ("backend-opencode",)
GEMINI_EXAMPLES = SPEC_EXAMPLES
"""The examples that run on gemini too: all of them."""
GEMINI_MODEL = "gemini-2.5-pro"


def test_every_example_has_a_page_and_a_model():
    """Each example folder of the pack has its spec, a README page and a CI model script."""
    for name in PACK:
        folder = EXAMPLES / name
        assert (folder / f"{name}.eval.yaml").is_file(), name
        assert (folder / "README.md").is_file(), name
        assert list((folder / "skills").glob("*/SKILL.md")), name
        assert "# <--" in (folder / f"{name}.eval.yaml").read_text(), f"{name}: no lines to change"
    for name in SPEC_EXAMPLES:
        assert example_spec(EXAMPLES / name).name == f"{name}.eval.yaml", name
        assert scripted_model(EXAMPLES / name).is_file(), name
        assert scripted_model(EXAMPLES / name, broken=True).is_file(), name


def _table_folders(readme: str) -> list[str]:
    """The folders the table of examples/README.md links to, in order."""
    import re

    rows = [line for line in readme.splitlines() if line.startswith("| [")]
    return [re.match(r"\| \[([^\]]+)\]\(([^)]+)/\)", row).group(2) for row in rows]


def test_the_readme_table_lists_every_example_folder():
    """examples/README.md's table names each folder of examples/ once, and nothing else."""
    listed = _table_folders((EXAMPLES / "README.md").read_text(encoding="utf-8"))
    folders = sorted(p.name for p in EXAMPLES.iterdir() if p.is_dir())
    assert sorted(listed) == folders
    assert len(listed) == len(set(listed))
    assert set(folders) == set(SPEC_EXAMPLES) | set(PLUGIN_EXAMPLES)


CAUGHT = {
    "false-success": ("sets the port and keeps the other settings", "port is 3000, not 8080"),
    "tool-misuse": ("deletes an old log through the wrapper", "the raw tool was used"),
    "runaway-loops": ("polls the deploy a bounded number of times", "called 6 times"),
    "prompt-regression": ("a bug fix is logged under Fixed", "- fixed: Crash on empty input."),
    "context-boundary": ("release notes belong to the neighbour", "unexpected: [commit-message]"),
    "mid-conversation": (
        "logs a change made after the mode was switched on",
        "the change was not logged",
    ),
    "hello": ("greets the team loudly", "hello team"),
}
"""Per example: the task that must fail when a broken agent plays it, and why."""
GEMINI_CAUGHT = {
    "runaway-loops": ("polls the deploy a bounded number of times", "status.txt is not 'ready'"),
}
"""Where gemini fails the broken agent for another reason: Gemini CLI's own loop detection
(``TOOL_CALL_LOOP_THRESHOLD = 5`` identical calls in a row) ends the turn at the fifth
``deploy-status``, before running it: four calls run, and the status file is never written."""


def _gemini_call(call: dict[str, Any]) -> dict[str, Any]:
    """A scripted Claude Code tool call as Gemini CLI's model would make it."""
    arguments = call.get("arguments") or {}
    if call.get("name") == "Skill":
        return {"name": "activate_skill", "arguments": {"name": arguments["skill"]}}
    if call.get("name") == "Bash":
        return {"name": "run_shell_command", "arguments": {"command": arguments["command"]}}
    raise AssertionError(f"no Gemini CLI equivalent known for the scripted tool {call!r}")


CLAUDE_SKILL_RESULT = "Launching skill: "
"""How Claude Code's ``Skill`` result starts; Gemini CLI's ``activate_skill`` result holds
``<activated_skill name="NAME">`` instead."""


def _in_gemini_tools(node: Any, key: str = "") -> Any:
    """``node`` (a loaded script) with every ``tool_calls:`` entry in Gemini CLI's tool names,
    and a rule waiting for a skill's load result waiting for Gemini CLI's."""
    if isinstance(node, list):
        return [_in_gemini_tools(item) for item in node]
    if key == "tool_result_contains" and node.startswith(CLAUDE_SKILL_RESULT):
        return f'<activated_skill name="{node.removeprefix(CLAUDE_SKILL_RESULT)}">'
    if not isinstance(node, dict):
        return node
    return {
        k: [_gemini_call(c) for c in v] if k == "tool_calls" else _in_gemini_tools(v, k)
        for k, v in node.items()
    }


def gemini_script(model: Path, out: Path) -> Path:
    """``model`` rewritten for Gemini CLI's tools, saved as ``out``."""
    loaded = yaml.safe_load(model.read_text(encoding="utf-8"))
    out.write_text(yaml.safe_dump(_in_gemini_tools(loaded), sort_keys=False), encoding="utf-8")
    return out


def _run_example(
    tmp_path: Path, name: str, broken: bool, backend: str = "claude"
) -> tuple[CaliperRun, list[str]]:
    """``caliper run`` of a fresh copy of the example, its scripted model playing the agent
    (the correct one, or with ``broken`` the one with the example's failure), on the real
    ``claude`` CLI or, with ``backend="gemini"``, the real ``gemini`` CLI."""
    cli = find_agent_cli(backend, tmp_path / "bin")
    if isinstance(cli, str):
        pytest.skip(cli)
    project = tmp_path / name
    shutil.copytree(EXAMPLES / name, project, symlinks=True)
    spec = example_spec(project)
    model = scripted_model(project, broken=broken)
    if backend == "gemini":
        model = gemini_script(model, tmp_path / "gemini-model.yaml")
    with ModelServer(model) as server:
        if backend == "gemini":
            engine = f"gemini:{GEMINI_MODEL}"
            env = {
                "GEMINI_CLI_PATH": str(cli.path),
                "GOOGLE_GEMINI_BASE_URL": server.url,
                "GEMINI_API_KEY": "gm-examples",
            }
        else:
            engine = "claude-code"
            env = {
                "CLAUDE_CLI_PATH": str(cli.path),
                "ANTHROPIC_BASE_URL": server.url,
                "ANTHROPIC_API_KEY": "sk-examples",
                "CLAUDE_CODE_MAX_RETRIES": "0",
            }
        run = run_caliper_process(
            "run",
            spec,
            "--model",
            engine,
            "--k",
            "1",
            home=FakeRealHome(tmp_path / "home"),
            cwd=project,
            sandbox_parent=tmp_path / "sandboxes",
            path=cli.path_env(),
            env=env,
            timeout=240,
        )
        unmatched = [str(r.answered_by) for r in server.model_requests() if r.outcome == "fallback"]
    return run, unmatched


def test_every_example_is_a_valid_spec():
    """``caliper validate`` accepts every spec of the pack (no agent CLI needed)."""
    specs = [str(EXAMPLES / name / f"{name}.eval.yaml") for name in SPEC_EXAMPLES]
    out = subprocess.run(
        [str(caliper_executable()), "validate", *specs],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.count("✓") == len(SPEC_EXAMPLES), out.stdout


_RUNS = [("claude", name) for name in SPEC_EXAMPLES] + [
    ("gemini", name) for name in GEMINI_EXAMPLES
]


@pytest.mark.e2e
@pytest.mark.parametrize(("backend", "name"), _RUNS)
def test_example_runs_green(tmp_path: Path, backend: str, name: str) -> None:
    """As shipped, with a correct agent, every task passes and every activation holds."""
    run, unmatched = _run_example(tmp_path, name, broken=False, backend=backend)
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
@pytest.mark.parametrize(("backend", "name"), _RUNS)
def test_example_catches_its_failure(tmp_path: Path, backend: str, name: str) -> None:
    """Played by an agent with the failure the example is about, its task fails, saying why."""
    task_name, why = (GEMINI_CAUGHT if backend == "gemini" else {}).get(name, CAUGHT[name])
    run, _ = _run_example(tmp_path, name, broken=True, backend=backend)
    assert run.returncode == 0, run.describe()  # a measured failure, not an unusable run
    (attempt,) = run.attempts(task_name)
    if backend == "gemini" and name == "runaway-loops":
        calls = [t for t in attempt["transcript"] if t.get("role") == "tool"]
        assert len(calls) == 4, calls  # the CLI stopped the loop, not the script running out
    checks = {c["key"]: c for c in attempt["checks"]}
    if set(checks) == {"activates"}:
        assert attempt["activation_passed"] is False, attempt
        assert why in checks["activates"]["reason"], checks["activates"]
    else:
        assert attempt["outcome"] == "task_fail", attempt
        assert why in attempt["reason"], attempt["reason"]


CAUGHT_ON_THE_TRANSCRIPT = {
    "tool-misuse": (
        "deletes an old log through the wrapper (tools form)",
        [
            "shell with input /(^|[;&|]\\s*)safe-rm\\s/ was never called",
            "shell with input /(^|[;&|]\\s*)rm\\s/ was called: call 1 (turn ",
            "Bash `rm logs/old.log`",
        ],
    ),
    "runaway-loops": (
        "polls the deploy a bounded number of times (tools form)",
        [
            "was called 6 times (at most 5 wanted); the first call over: call 6 (turn ",
            "Bash `deploy-status`",
        ],
    ),
}
"""Per example with a ``tools:`` form: that task, and what its failure names (the call)."""


@pytest.mark.e2e
@pytest.mark.parametrize("name", sorted(CAUGHT_ON_THE_TRANSCRIPT))
def test_tools_form_catches_the_failure_on_the_transcript(tmp_path: Path, name: str) -> None:
    """The ``tools:`` task beside the side-effect one fails the broken agent, naming the
    call; the green run (``test_example_runs_green_through_claude``) passes it."""
    task_name, why = CAUGHT_ON_THE_TRANSCRIPT[name]
    run, _ = _run_example(tmp_path, name, broken=True)
    assert run.returncode == 0, run.describe()
    (attempt,) = run.attempts(task_name)
    assert attempt["outcome"] == "task_fail", attempt
    for part in why:
        assert part in attempt["reason"], attempt["reason"]


@pytest.mark.e2e
@pytest.mark.parametrize("broken", [False, True])
def test_the_documented_command_runs_an_example_offline(tmp_path: Path, broken: bool) -> None:
    """``python -m caliper.testing.example FOLDER [--broken]``, as examples/README.md gives it:
    green with the correct agent; with ``--broken``, the example's task fails for its reason."""
    import json
    import sys

    cli = find_agent_cli("claude", tmp_path / "bin")
    if isinstance(cli, str):
        pytest.skip(cli)
    project = tmp_path / "false-success"
    shutil.copytree(EXAMPLES / "false-success", project, symlinks=True)
    (project / ".git").mkdir()  # results are filed in the copy, not in the repository
    command = [sys.executable, "-m", "caliper.testing.example", str(project), "--k", "1"]
    out = subprocess.run(
        [*command, *(["--broken"] if broken else [])],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "$ caliper run false-success.eval.yaml --model claude-code" in out.stderr
    (saved,) = (project / ".caliper" / "results" / "false-success").glob("*.json")
    (task,) = json.loads(saved.read_text())["tasks"]
    (attempt,) = task["attempts"]
    if broken:
        assert attempt["outcome"] == "task_fail" and "port is 3000, not 8080" in attempt["reason"]
    else:
        assert attempt["outcome"] == "pass", attempt


def test_the_command_refuses_a_folder_that_is_not_an_example(tmp_path: Path) -> None:
    import sys

    (tmp_path / "x.eval.yaml").write_text("tasks: []\n")
    out = subprocess.run(
        [sys.executable, "-m", "caliper.testing.example", str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 2 and "no scripted-model.yaml" in out.stderr
