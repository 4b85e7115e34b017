"""Nested SKILL.md files are not separate skills on Codex (issue 11 item 2), end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import test_codex_conformance as conformance

from caliper.testing.conformance import ConformanceKit, ok_run, tool_turns
from caliper.testing.harness import FakeRealHome
from caliper.testing.nested_skills import (
    NESTED_MARKER,
    PARENT,
    assert_only_declared_listed,
    write_nested_skill,
)

pytest_plugins = ["caliper.testing.fixtures"]

pytestmark = pytest.mark.e2e


@pytest.fixture
def kit(tmp_path: Path, agent_cli: Any) -> Any:
    suite = conformance.TestCodexConformance()
    made = ConformanceKit(suite, tmp_path, FakeRealHome(tmp_path / "real-home"), agent_cli("codex"))
    yield made
    made.close()


def test_nested_skill_files_are_hidden_and_a_read_is_undeclared(kit: ConformanceKit) -> None:
    entry = write_nested_skill(kit)
    nested_read = f"cat $CODEX_HOME/skills/{PARENT}/sub/SKILL.md"
    script = kit.script(
        [
            {
                "tool_calls": [
                    {
                        "name": "exec_command",
                        "arguments": {"cmd": f"cat {{{{skill_path:{PARENT}}}}}"},
                    }
                ]
            },
            {"tool_calls": [{"name": "exec_command", "arguments": {"cmd": nested_read}}]},
            {"text": "Done."},
        ]
    )
    server = kit.server(script)
    spec = kit.spec(
        [{"name": "nested", "prompt": "Do it.", "assert": "assert True"}], skills=[entry]
    )
    run = kit.run(spec, server)
    attempt = ok_run(run)
    assert_only_declared_listed(server.model_requests()[0].sent_text())
    outputs = "\n".join(t.get("tool_output") or "" for t in tool_turns(attempt))
    assert NESTED_MARKER.format(name="nested-one") in outputs, outputs  # still readable
    assert attempt["activated"] == [PARENT], run.describe()
    assert attempt["undeclared"] == ["nested-one"], run.describe()
    assert "loaded skills the spec does not declare: nested-one" in run.stdout, run.describe()


@pytest.mark.parametrize(("count", "over"), [(70, False), (76, True)])
def test_skill_listing_budget_matches_the_pinned_cli(
    kit: ConformanceKit, count: int, over: bool
) -> None:
    """Issue 11 item 4: about 21,700 characters of listing lines on codex 0.171 / gpt-5.5."""
    from caliper.testing.listing import check_listing_budget

    check_listing_budget(kit, count, over=over)


def test_a_failed_read_of_skill_md_is_not_an_activation(kit: ConformanceKit) -> None:
    """Issue 11 item 1 on the real codex: the read fails (bad flag), nothing was loaded."""
    entry = kit.skill("alpha-target")
    bad_read = {
        "name": "exec_command",
        "arguments": {"cmd": "cat --bogus-flag {{skill_path:alpha-target}}"},
    }
    server = kit.server(kit.script([{"tool_calls": [bad_read]}, {"text": "Could not read it."}]))
    spec = kit.spec(
        [{"name": "failed", "prompt": "Do it.", "assert": "assert True"}], skills=[entry]
    )
    run = kit.run(spec, server)
    attempt = ok_run(run)
    reads = [t for t in tool_turns(attempt) if "--bogus-flag" in str(t.get("tool_input"))]
    assert reads and reads[0]["is_error"] is True, tool_turns(attempt)
    assert attempt["activated"] == [], run.describe()
