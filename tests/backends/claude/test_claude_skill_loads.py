"""Which Skill calls count as activations, through ``caliper run`` and the real ``claude``.

Claude Code refuses to load a skill whose frontmatter says ``disable-model-invocation: true``
(the Skill tool answers with an error). Such a refused call is not an activation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import test_claude_conformance as conformance

from caliper.testing.conformance import ConformanceKit, ok_run, tool_turns
from caliper.testing.harness import FakeRealHome

pytest_plugins = ["caliper.testing.fixtures"]

pytestmark = pytest.mark.e2e


@pytest.fixture
def kit(tmp_path: Path, agent_cli: Any) -> Any:
    """A conformance kit for the pinned claude (skips when it cannot run)."""
    suite = conformance.TestClaudeCodeConformance()
    kit = ConformanceKit(suite, tmp_path, FakeRealHome(tmp_path / "real-home"), agent_cli("claude"))
    yield kit
    kit.close()


def locked_skill(kit: ConformanceKit, name: str) -> str:
    """A skill the model may not invoke (``disable-model-invocation: true``)."""
    folder = kit.project / "skills" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Handles {name} chores.\n"
        "disable-model-invocation: true\n---\nLOCKED-BODY\n",
        encoding="utf-8",
    )
    return f"./skills/{name}/SKILL.md"


def test_a_refused_skill_call_is_not_an_activation(kit: ConformanceKit) -> None:
    """Issue 11 item 1: the Skill tool refuses the locked skill; only the open one counts."""
    skills = [locked_skill(kit, "locked-skill"), kit.skill("open-skill")]
    script = kit.script(
        [
            {"tool_calls": [{"name": "Skill", "arguments": {"skill": "locked-skill"}}]},
            {"tool_calls": [{"name": "Skill", "arguments": {"skill": "open-skill"}}]},
            {"text": "Done."},
        ]
    )
    server = kit.server(script)
    spec = kit.spec(
        [{"name": "refused", "prompt": "Do it.", "assert": "assert True"}], skills=skills
    )
    run = kit.run(spec, server)
    attempt = ok_run(run)
    calls = [t for t in tool_turns(attempt) if t.get("tool_name") == "Skill"]
    assert len(calls) == 2, calls
    assert calls[0]["is_error"] is True, calls[0]
    assert "disable-model-invocation" in (calls[0].get("tool_output") or ""), calls[0]
    assert attempt["activated"] == ["open-skill"], run.describe()
    assert "LOCKED-BODY" not in server.all_sent_text()


def test_links_in_a_skill_folder_neither_break_nor_leak(kit: ConformanceKit) -> None:
    """Issue 11 item 16: a dangling link used to make every attempt infra_error; a link inside
    is followed; a link out of the skill's tree refuses the run before any attempt, so its
    target never reaches the agent."""
    import os

    kit.skill("linky")
    folder = kit.project / "skills" / "linky"
    (folder / "references").mkdir()
    (folder / "references" / "ref.txt").write_text("INNER-MARKER\n")
    outside = kit.root / "outside-secret.txt"
    outside.write_text("OUTSIDE-MARKER\n")
    os.symlink("missing.txt", folder / "dangling")
    os.symlink(".", folder / "loop")
    os.symlink("references", folder / "inner")
    listing = 'cd "$HOME/.claude/skills/linky" && find . | sort && cat inner/ref.txt; cat secret'
    script = kit.script(
        [
            {"tool_calls": [{"name": "Bash", "arguments": {"command": listing}}]},
            {"text": "Listed."},
        ]
    )
    server = kit.server(script)
    spec = kit.spec(
        [{"name": "links", "prompt": "List it.", "assert": "assert True"}],
        skills=["./skills/linky/SKILL.md"],
    )
    run = kit.run(spec, server)
    attempt = ok_run(run)
    assert attempt["outcome"] == "pass", run.describe()
    output = "\n".join(t.get("tool_output") or "" for t in tool_turns(attempt))
    assert "./inner/ref.txt" in output and "INNER-MARKER" in output, output
    assert "./dangling" not in output and "./loop" not in output, output
    assert "dangling: is a link to missing.txt, which does not exist" in run.stderr, run.stderr

    os.symlink(outside, folder / "secret")
    refused_server = kit.server(script)
    refused = kit.run(spec, refused_server)
    assert refused.returncode == 2, refused.describe()
    assert "linky/secret is a link to" in refused.stderr, refused.stderr
    assert not refused_server.model_requests()
    assert "OUTSIDE-MARKER" not in refused_server.all_sent_text()


def test_run_refuses_activates_naming_a_model_hidden_skill(kit: ConformanceKit) -> None:
    """Issue 11 item 3: such a check could never pass; refused before any attempt."""
    skills = [locked_skill(kit, "locked-skill")]
    server = kit.server(kit.script([{"text": "unused"}]))
    spec = kit.spec(
        [{"name": "never", "prompt": "Do it.", "activates": ["locked-skill"]}], skills=skills
    )
    run = kit.run(spec, server)
    assert run.returncode == 2, run.describe()
    assert "tasks[0].activates[0]" in run.stderr and "disable-model-invocation" in run.stderr
    assert "Traceback" not in run.stderr
    assert not server.model_requests()


def test_nested_skill_files_are_not_listed(kit: ConformanceKit) -> None:
    """Issue 11 item 2 on claude: only the declared skill reaches the model's list."""
    from caliper.testing.nested_skills import assert_only_declared_listed, write_nested_skill

    entry = write_nested_skill(kit)
    server = kit.server(kit.script([{"text": "Nothing to do."}]))
    spec = kit.spec(
        [{"name": "nested", "prompt": "Do it.", "assert": "assert True"}], skills=[entry]
    )
    ok_run(kit.run(spec, server))
    assert_only_declared_listed(server.model_requests()[0].sent_text())


@pytest.mark.parametrize(
    ("model", "count", "over"),
    [
        ("claude-sonnet-4-5", 29, False),  # 8,000: a 200k-context model
        ("claude-sonnet-4-5", 31, True),
        (None, 112, False),  # 30,000: the CLI's default model (1M tokens, 3 a character)
        (None, 114, True),
        ("claude-sonnet-4-5[1m]", 150, False),  # 40,000
        ("claude-sonnet-4-5[1m]", 152, True),
    ],
)
def test_skill_listing_budget_matches_the_pinned_cli(
    kit: ConformanceKit, model: str | None, count: int, over: bool
) -> None:
    """The budget follows the model (1 % of its context window): the run header warns
    exactly when the model's figure is passed, and under it every description arrives whole
    (the 77 skills of 27,637 characters a real collection sent whole fit the default's)."""
    from caliper.testing.listing import check_listing_budget

    kit.suite.model_for_tests = model
    check_listing_budget(kit, count, over=over)
