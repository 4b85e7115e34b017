"""``--user-customizations`` on the real ``codex`` CLI (scripted model server, fake user home):
the user's skill, ``AGENTS.md`` and MCP server reach the model only when asked, and the run
records them by name; sessions never come along."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from codex_support import KEY_VARIABLE, user_config

from caliper.testing.harness import FakeRealHome, find_agent_cli, run_caliper_process
from caliper.testing.model_server import ModelServer

pytestmark = pytest.mark.e2e

SKILL_MARK = "PERSONAL-CODEX-SKILL"
RULES_MARK = "PERSONAL-CODEX-RULES"
HISTORY_MARK = "PERSONAL-CODEX-HISTORY"
SPEC = """\
tasks:
  - name: answers
    prompt: Say ok.
    assert: "assert True"
"""


def _user_home(home: Path, server: ModelServer, log: Path) -> None:
    codex = home / ".codex"
    skill = codex / "skills" / "personal-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        f"---\nname: personal-notes\ndescription: {SKILL_MARK} takes notes.\n---\nNotes.\n"
    )
    (codex / "AGENTS.md").write_text(f"{RULES_MARK}: answer briefly.\n")
    sessions = codex / "sessions" / "2026" / "01" / "01"
    sessions.mkdir(parents=True)
    (sessions / "rollout-old.jsonl").write_text(json.dumps({"text": HISTORY_MARK}) + "\n")
    args = json.dumps(["-m", "caliper.testing.mcp_echo", "--log", str(log)])
    extra = f'\n[mcp_servers.personal]\ncommand = "{sys.executable}"\nargs = {args}\n'
    (codex / "config.toml").write_text(user_config(server.url, extra=extra))


def test_codex_loads_the_user_setup_only_on_request(tmp_path: Path) -> None:
    cli = find_agent_cli("codex", tmp_path / "bin")
    if isinstance(cli, str):
        pytest.skip(cli)
    home = FakeRealHome(tmp_path / "real-home")
    project = tmp_path / "project"
    project.mkdir()
    spec = project / "custom.eval.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    runs = []
    for number, flags in enumerate(((), ("--user-customizations",))):
        with ModelServer({"turns": [{"text": "ok"}]}) as server:
            if number == 0:
                _user_home(home.path, server, tmp_path / "mcp.log")
            else:  # the same user config, pointed at this run's server
                config = home.path / ".codex" / "config.toml"
                text = config.read_text()
                config.write_text(text.replace(runs[0][1], server.url))
            run = run_caliper_process(
                "run", spec, "--model", "codex", "--k", "1", *flags,
                home=home, cwd=project, sandbox_parent=tmp_path / f"sandboxes-{number}",
                path=cli.path_env(os.defpath),
                env={"CODEX_CLI_PATH": str(cli.path), KEY_VARIABLE: "sk-test"},
                timeout=180,
            )  # fmt: skip
            requests = server.model_requests()
            sent = "\n".join(r.sent_text() for r in requests)
            tools = {n for r in requests if r.conversation for n in r.conversation.tool_names}
            runs.append((run, server.url, sent, tools))
            if number == 0:
                plain_log_existed = (tmp_path / "mcp.log").exists()
    (plain, _, plain_sent, plain_tools), (custom, _, custom_sent, _custom_tools) = runs
    assert plain.returncode == 0, plain.describe()
    for mark in (SKILL_MARK, RULES_MARK, HISTORY_MARK):
        assert mark not in plain_sent, mark
    assert not [n for n in plain_tools if "personal" in n], plain_tools
    assert not plain_log_existed
    assert plain.results["meta"]["user_customizations"] is False
    assert custom.returncode == 0, custom.describe()
    assert SKILL_MARK in custom_sent and RULES_MARK in custom_sent
    # Codex offers MCP tools through tool_search, so the request does not name them: the
    # user's server was started and asked for its tools in this run only
    log = tmp_path / "mcp.log"
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(c.get("method") == "tools/list" for c in calls), calls
    assert HISTORY_MARK not in custom_sent
    setup = custom.results["meta"]["user_setup"]
    assert setup["skills"] == ["personal-notes"]
    assert setup["rules"] == ["~/.codex/AGENTS.md"]
    assert setup["mcp"] == ["personal"]
    assert any("bundled system skills stay off" in n for n in setup["not_loaded"])
    assert not plain.home_changes and not custom.home_changes
