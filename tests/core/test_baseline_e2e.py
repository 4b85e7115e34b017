"""``caliper run SPEC --baseline`` on the real, pinned ``claude`` CLI against the scripted model
server: a skill the task needs (the scripted model only writes the file when the skill is
offered to it) is reported as helping, with significance; a skill that changes nothing as no
detectable difference; the saved attempts' start times show the arms interleaved."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from caliper.testing.harness import FakeRealHome, find_agent_cli, run_caliper_process
from caliper.testing.model_server import ModelServer

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

MARKER = "WRITER-SKILL-7731"
SKILL = f"""---
name: writer
description: Writes out.txt for the user ({MARKER}).
---
Write the word yes into out.txt with the shell.
"""
NEUTRAL = """---
name: neutral
description: Talks about the weather.
---
Say something about the weather.
"""
SCRIPT = {
    "rules": [
        {  # the skill is offered: load it, then do what it says
            "when": {"user_text_contains": "Make the file", "request_contains": MARKER},
            "turns": [
                {"tool_calls": [{"name": "Skill", "arguments": {"skill": "writer"}}]},
                {"tool_calls": [{"name": "Bash", "arguments": {"command": "echo yes > out.txt"}}]},
                {"text": "Wrote out.txt."},
            ],
        },
        {  # no skill: the agent does not know how
            "when": {"user_text_contains": "Make the file"},
            "turns": [{"text": "I do not know which file you mean."}],
        },
        {  # the task every agent manages, skill or not
            "when": {"user_text_contains": "Write out.txt yourself"},
            "turns": [
                {"tool_calls": [{"name": "Bash", "arguments": {"command": "echo yes > out.txt"}}]},
                {"text": "Done."},
            ],
        },
    ]
}


def _run(tmp_path: Path, skill: str, name: str, prompt: str, k: int) -> tuple[object, Path]:
    claude = find_agent_cli("claude", tmp_path / "bin-claude")
    if isinstance(claude, str):
        pytest.skip(claude)
    project = tmp_path / name
    (project / "skills" / name).mkdir(parents=True)
    (project / "skills" / name / "SKILL.md").write_text(skill, encoding="utf-8")
    spec = project / f"{name}.eval.yaml"
    spec.write_text(
        f"skills:\n  - ./skills/{name}\ntasks:\n  - name: the file\n    prompt: {prompt}\n"
        "    assert: \"from pathlib import Path; assert Path('out.txt').is_file()\"\n",
        encoding="utf-8",
    )
    home = tmp_path / f"home-{name}"
    home.mkdir()
    server = ModelServer(SCRIPT).start()
    try:
        done = run_caliper_process(
            "run", spec, "--model", "claude-code:claude-sonnet-4-5", "--baseline",
            "--k", str(k), "--workers", "2", "--format", "json",
            home=FakeRealHome(home),
            cwd=project,
            sandbox_parent=tmp_path / f"boxes-{name}",
            env={
                "CLAUDE_CLI_PATH": str(claude.path),
                "ANTHROPIC_BASE_URL": server.url,
                "ANTHROPIC_API_KEY": "sk-baseline",
                "CLAUDE_CODE_MAX_RETRIES": "0",
            },
            timeout=600,
        )  # fmt: skip
    finally:
        server.stop()
    return done, project / ".caliper" / "results" / name


def test_a_needed_skill_helps_with_significance_on_the_real_cli(tmp_path: Path) -> None:
    done, folder = _run(tmp_path, SKILL, "writer", "Make the file.", k=6)
    assert done.returncode == 0, done.stdout + done.stderr
    (pair,) = json.loads(done.stdout)["pairs"]
    assert pair["verdict"] == "helps", pair
    assert pair["comparison"]["p_adjusted"] < 0.05
    runs = {
        r["meta"]["baseline"]["arm"]: r
        for r in (json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("*.json"))
    }
    assert [a["outcome"] for a in runs["full"]["tasks"][0]["attempts"]] == ["pass"] * 6
    assert [a["outcome"] for a in runs["control"]["tasks"][0]["attempts"]] == ["task_fail"] * 6
    assert runs["full"]["tasks"][0]["attempts"][0]["activated"] == ["writer"]
    # interleaved: ordered by start time, the arms alternate pair by pair (never one arm's
    # attempts all first), and each pair's two attempts start before the next pair's
    started = sorted(
        (a["started_at"], arm, a["attempt"])
        for arm, run in runs.items()
        for a in run["tasks"][0]["attempts"]
    )
    arms_in_order = [arm for _, arm, _ in started]
    assert arms_in_order[:6] != ["control"] * 6 and arms_in_order[:6] != ["full"] * 6
    assert max(n for _, _, n in started[:4]) <= 2
    assert "sk-baseline" not in done.stdout + done.stderr


def test_a_skill_that_changes_nothing_is_no_detectable_difference_on_the_real_cli(
    tmp_path: Path,
) -> None:
    done, _folder = _run(tmp_path, NEUTRAL, "neutral", "Write out.txt yourself.", k=4)
    assert done.returncode == 0, done.stdout + done.stderr
    (pair,) = json.loads(done.stdout)["pairs"]
    assert pair["verdict"] == "no detectable difference", pair
    assert pair["lift"] == 0
    assert pair["sensitivity"] is not None
