"""``--user-customizations`` on the real ``claude`` CLI, with a fake user home: the user's
skill, rules file, settings and MCP server reach the model only when asked, the run records
them by name, a user skill that fires is an undeclared load, and a bundled skill that fires
is recorded as built-in (never scored). History and memory never come along."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from claude_run_support import ClaudeRunLab, lab  # noqa: F401 (fixture)

from caliper.testing.harness import caliper_executable

pytestmark = pytest.mark.e2e

SKILL_MARK = "PERSONAL-SKILL-MARK"
RULES_MARK = "PERSONAL-RULES-MARK"
HISTORY_MARK = "PERSONAL-HISTORY-MARK"
CLASH_MARK = "PERSONAL-CLASH-MARK"


def _user_home(world: ClaudeRunLab) -> None:
    claude = world.home / ".claude"
    skill = claude / "skills" / "personal-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: personal-notes\ndescription: {SKILL_MARK} takes notes for the user.\n---\n"
        "Write notes.\n"
    )
    clash = claude / "skills" / "greeter"  # the same name as a declared skill: that one wins
    clash.mkdir(parents=True)
    (clash / "SKILL.md").write_text(f"---\nname: greeter\ndescription: {CLASH_MARK}.\n---\nx\n")
    (claude / "CLAUDE.md").write_text(f"{RULES_MARK}: answer briefly.\n")
    (claude / "settings.json").write_text(json.dumps({"env": {"PERSONAL_SETTING": "on"}}))
    project = claude / "projects" / "-somewhere"
    project.mkdir(parents=True)
    (project / "old.jsonl").write_text(json.dumps({"type": "user", "text": HISTORY_MARK}) + "\n")
    (claude / "history.jsonl").write_text(json.dumps({"display": HISTORY_MARK}) + "\n")
    server = {
        "command": sys.executable,
        "args": ["-m", "caliper.testing.mcp_echo", "--log", str(world.root / "mcp.log")],
    }
    (world.home / ".claude.json").write_text(json.dumps({"mcpServers": {"personal": server}}))
    declared = world.project / "skills" / "greeter"
    declared.mkdir(parents=True)
    (declared / "SKILL.md").write_text(
        "---\nname: greeter\ndescription: Greets people by name.\n---\nSay hello.\n"
    )


SCRIPT = {
    "fallback_text": "Done.",
    "rules": [
        {
            "when": {"user_text_contains": "TASK-MEETING"},
            "turns": [
                {"tool_calls": [{"name": "Skill", "arguments": {"skill": "personal-notes"}}]},
                {"text": "Noted."},
            ],
        },
        {
            "when": {"user_text_contains": "TASK-CHART"},
            "turns": [
                {"tool_calls": [{"name": "Skill", "arguments": {"skill": "dataviz"}}]},
                {"text": "Charted."},
            ],
        },
    ],
}
SPEC = {
    "skills": ["./skills/greeter"],
    "tasks": [
        {
            "name": "notes",
            "prompt": "TASK-MEETING: take notes of this meeting.",
            "activates": ["greeter"],
        },
        {"name": "chart", "prompt": "TASK-CHART: draw a chart of sales.", "activates": []},
    ],
}


def _sent(server) -> str:
    return "\n".join(r.sent_text() for r in server.model_requests())


def test_user_setup_is_loaded_only_on_request(lab: ClaudeRunLab) -> None:  # noqa: F811
    _user_home(lab)
    spec = lab.spec(SPEC, name="custom")
    before = sorted(str(p) for p in lab.home.rglob("*"))
    assert not any(".cache" in p for p in before)

    isolated = lab.server(SCRIPT)
    process = lab.start(spec, isolated)
    _out, err = lab.finish(process)
    assert process.returncode == 0, err
    sent = _sent(isolated)
    for mark in (SKILL_MARK, RULES_MARK, HISTORY_MARK, "mcp__personal"):
        assert mark not in sent, mark
    (plain,) = lab.results()
    assert plain["meta"]["user_customizations"] is False
    assert plain["meta"]["user_setup"] == {}
    notes = plain["tasks"][0]["attempts"][0]
    assert notes["undeclared"] == [] and notes["built_in"] == []

    loaded = lab.server(SCRIPT)
    process = lab.start(spec, loaded, "--user-customizations")
    out, err = lab.finish(process)
    assert process.returncode == 0, err
    sent = _sent(loaded)
    assert SKILL_MARK in sent and RULES_MARK in sent
    assert "mcp__personal__echo" in sent
    assert HISTORY_MARK not in sent  # never the session history
    assert CLASH_MARK not in sent and "Greets people by name" in sent  # the declared one won
    custom = lab.results()[-1]
    meta = custom["meta"]
    assert meta["user_customizations"] is True
    assert meta["user_setup"]["skills"] == ["personal-notes"]
    assert meta["user_setup"]["rules"] == ["~/.claude/CLAUDE.md"]
    assert meta["user_setup"]["settings"] == ["settings.json: env"]
    assert meta["user_setup"]["mcp"] == ["personal"]
    assert meta["user_setup"]["not_loaded"] == [
        "user skill greeter: a declared skill of that name wins"
    ]
    notes, chart = (task["attempts"][0] for task in custom["tasks"])
    # the user's skill competed and won: an undeclared load, and the neighbour lost
    assert notes["undeclared"] == ["personal-notes"]
    assert notes["activated"] == [] and notes["activation_passed"] is False
    # a bundled skill fired: recorded apart, and activates: [] still passes
    assert chart["built_in"] == ["dataviz"], chart["transcript"]
    assert chart["undeclared"] == []
    assert chart["activation_passed"] is True
    assert "a built-in skill won this prompt: dataviz" in out
    assert "personal-notes (not declared)" in out
    assert "With your own setup loaded" in out
    cache = lab.home / ".cache"  # caliper's own entry-point cache, written by the caliper process
    after = sorted(str(p) for p in lab.home.rglob("*") if p != cache and cache not in p.parents)
    assert after == before, set(after) ^ set(before)  # the real home untouched

    saved = sorted((lab.project / ".caliper" / "results").glob("*/*.json"), key=os.path.getmtime)
    compare = subprocess.run(
        [str(caliper_executable()), "compare", str(saved[0]), str(saved[1])],
        cwd=lab.project,
        env=lab.env(loaded),
        capture_output=True,
        text=True,
        check=False,
    )
    assert compare.returncode in (0, 1), compare.stderr
    assert "different user setups loaded: none (isolated) → skills personal-notes" in (
        compare.stdout
    ), compare.stdout
