"""Which SKILL.md reads count as loads on Codex: only ones that succeeded, and undeclared ones
are reported by name (issue 11 items 1 and 2)."""

from __future__ import annotations

import json
from pathlib import Path

from caliper.plugin.attempt import InstalledSkill
from caliper_backend_codex import events, rollout
from caliper_backend_codex.backend import detect_activation
from caliper_backend_codex.home import PreparedHome


def _command(item_id: str, script: str, *, code: int) -> str:
    item = {
        "id": item_id,
        "type": "command_execution",
        "command": f"/bin/bash -lc '{script}'",
        "aggregated_output": "",
        "exit_code": code,
        "status": "completed" if code == 0 else "failed",
    }
    return json.dumps({"type": "item.completed", "item": item})


def _stream(*lines: str) -> events.CodexRun:
    head = json.dumps({"type": "thread.started", "thread_id": "t"})
    tail = json.dumps({"type": "turn.completed", "usage": {}})
    return events.parse_events("\n".join([head, *lines, tail]))


def _setup(tmp_path: Path) -> tuple[PreparedHome, list[InstalledSkill]]:
    codex_home = tmp_path / "home" / ".codex"
    skills = []
    for name in ("alpha", "beta"):
        folder = codex_home / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: d\n---\nx\n")
        skills.append(InstalledSkill(name, "d", folder))
    nested = codex_home / "skills" / "alpha" / "sub"
    nested.mkdir()
    (nested / "SKILL.md").write_text("---\nname: alpha-sub\ndescription: d\n---\nx\n")
    prepared = PreparedHome(codex_home, {}, {"HOME": str(tmp_path / "home")})
    return prepared, skills


def test_a_failed_read_of_skill_md_is_not_an_activation(tmp_path: Path) -> None:
    prepared, skills = _setup(tmp_path)
    alpha, beta = (str(s.skill_file) for s in skills)
    run = _stream(
        _command("1", f"cat --bogus {alpha}", code=1),
        _command("2", f"cat {beta}", code=0),
    )
    activated, undeclared = detect_activation(run, rollout.Rollout(), skills, prepared, tmp_path)
    assert activated == ["beta"]
    assert undeclared == []


def test_a_failed_command_in_the_session_file_is_not_an_activation(tmp_path: Path) -> None:
    prepared, skills = _setup(tmp_path)
    alpha = str(skills[0].skill_file)
    facts = rollout.Rollout(
        commands=[rollout.RolloutCommand(("/bin/bash", "-lc", f"cat {alpha}"), None, failed=True)]
    )
    activated, _ = detect_activation(_stream(), facts, skills, prepared, tmp_path)
    assert activated == []


def test_reading_a_nested_skill_md_is_reported_as_undeclared(tmp_path: Path) -> None:
    prepared, skills = _setup(tmp_path)
    nested = prepared.codex_home / "skills" / "alpha" / "sub" / "SKILL.md"
    run = _stream(_command("1", f"cat {nested}", code=0))
    activated, undeclared = detect_activation(run, rollout.Rollout(), skills, prepared, tmp_path)
    assert activated == []
    assert undeclared == ["alpha-sub"]


def test_rollout_marks_failed_commands(tmp_path: Path) -> None:
    path = tmp_path / "rollout.jsonl"
    item = {
        "type": "CommandExecution",
        "command": ["/bin/bash", "-lc", "cat x"],
        "cwd": "/w",
        "status": "failed",
        "exit_code": 1,
    }
    payload = {"type": "item_completed", "item": item}
    path.write_text(json.dumps({"type": "event_msg", "payload": payload}) + "\n")
    assert [c.failed for c in rollout.read_rollout(path).commands] == [True]
