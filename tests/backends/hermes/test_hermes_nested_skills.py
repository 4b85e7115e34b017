"""Nested SKILL.md files are not separate skills on Hermes (issue 11 item 2), end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import test_hermes_conformance as conformance

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
    suite = conformance.TestHermesConformance()
    made = ConformanceKit(
        suite, tmp_path, FakeRealHome(tmp_path / "real-home"), agent_cli("hermes")
    )
    yield made
    made.close()


def test_nested_skills_are_hidden_but_their_files_stay_readable(kit: ConformanceKit) -> None:
    entry = write_nested_skill(kit)
    script = kit.script(
        [
            {"tool_calls": [{"name": "skill_view", "arguments": {"name": PARENT}}]},
            {
                "tool_calls": [
                    {
                        "name": "skill_view",
                        "arguments": {"name": PARENT, "file_path": "sub/SKILL.md"},
                    }
                ]
            },
            {"tool_calls": [{"name": "skill_view", "arguments": {"name": "nested-two"}}]},
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
    views = [t for t in tool_turns(attempt) if t.get("tool_name") == "skill_view"]
    assert len(views) == 3, views
    assert NESTED_MARKER.format(name="nested-one") in (views[1].get("tool_output") or ""), views[1]
    assert views[2]["is_error"] is True, views[2]  # the nested skill is not loadable by name
    assert NESTED_MARKER.format(name="nested-two") not in server.all_sent_text()
    assert attempt["activated"] == [PARENT], run.describe()
    assert attempt["undeclared"] == [], run.describe()
