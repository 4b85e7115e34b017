"""Which skill_view calls count as loads on Hermes (issue 11 items 1 and 2)."""

from __future__ import annotations

import json
from pathlib import Path

from caliper.plugin.attempt import InstalledSkill
from caliper_backend_hermes.events import activated_skills, transcript, undeclared_skills

ROOT = Path("/h/.hermes/skills/workspace")


def _call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "function": {"name": name, "arguments": json.dumps(arguments)}}


def test_a_refused_skill_view_is_not_an_activation() -> None:
    refused = {"success": False, "error": "Skill 'alpha' is disabled."}
    messages = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                _call("1", "skill_view", {"name": "alpha"}),
                _call("2", "read_file", {"path": f"{ROOT}/beta/SKILL.md"}),
                _call("3", "skill_view", {"name": "gamma"}),
                _call("4", "skill_view", {"name": "nested-one"}),
            ],
        },
        {"role": "tool", "tool_call_id": "1", "content": json.dumps(refused)},
        {"role": "tool", "tool_call_id": "2", "content": '{"error": "No such file"}'},
        {"role": "tool", "tool_call_id": "3", "content": '{"success": true}'},
        {"role": "tool", "tool_call_id": "4", "content": '{"success": true}'},
        {"role": "assistant", "content": "done"},
    ]
    skills = [InstalledSkill(n, "d", ROOT / n) for n in ("alpha", "beta", "gamma")]
    turns = transcript(messages)
    assert activated_skills(turns, skills) == ["gamma"]
    assert undeclared_skills(turns, skills) == ["nested-one"]
