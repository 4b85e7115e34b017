"""Nested SKILL.md files are not separate skills on pi (issue 11 item 2), end to end."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import test_pi_conformance as conformance

from caliper.testing.conformance import ConformanceKit, ok_run
from caliper.testing.harness import FakeRealHome
from caliper.testing.nested_skills import PARENT, assert_only_declared_listed, write_nested_skill

pytest_plugins = ["caliper.testing.fixtures"]

pytestmark = pytest.mark.e2e


@pytest.fixture
def kit(tmp_path: Path, agent_cli: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    suite = conformance.TestPiConformance()
    cli = agent_cli("pi")
    monkeypatch.setenv("PI_CLI_PATH", str(cli.path))
    made = ConformanceKit(suite, tmp_path, FakeRealHome(tmp_path / "real-home"), cli)
    yield made
    made.close()


def test_nested_skill_files_are_not_listed(kit: ConformanceKit) -> None:
    entry = write_nested_skill(kit)
    read = {"name": "read", "arguments": {"path": f"{{{{skill_path:{PARENT}}}}}"}}
    server = kit.server(kit.script([{"tool_calls": [read]}, {"text": "Done."}]))
    spec = kit.spec(
        [{"name": "nested", "prompt": "Do it.", "assert": "assert True"}], skills=[entry]
    )
    attempt = ok_run(kit.run(spec, server))
    assert_only_declared_listed(server.model_requests()[0].sent_text())
    assert attempt["activated"] == [PARENT]
    assert attempt["undeclared"] == []


def test_pi_lists_every_description_whole(kit: ConformanceKit) -> None:
    """Issue 11 item 4: pi has no listing budget (``skill_listing_budget is None``):
    120 descriptions of 250 characters, past claude's and codex's budgets, all arrive whole."""
    from caliper.testing.listing import skills_for, whole_descriptions

    assert kit.suite.backend().skill_listing_budget is None
    entries = skills_for(kit, 120)
    server = kit.server(kit.script([{"text": "Nothing to load."}]))
    spec = kit.spec([{"name": "many", "prompt": "Hello.", "assert": "assert True"}], skills=entries)
    run = kit.run(spec, server)
    ok_run(run)
    assert whole_descriptions(server.model_requests()[0].sent_text()) == 120
    assert "Warning: " not in run.stderr
