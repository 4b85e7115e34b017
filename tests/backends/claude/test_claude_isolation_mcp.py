"""What a run can see: nothing of the user's setup but authentication, and only caliper's MCP."""

from __future__ import annotations

import json
import stat
import sys

import pytest
from claude_support import attempt, make_skill, needs_claude, use_model

from caliper.plugin.attempt import AgentStatus, McpServerConfig
from caliper.testing.model_server import ModelServer
from caliper_backend_claude.mcp import ClaudeMcpTranslator

pytestmark = [needs_claude, pytest.mark.e2e]

MARKERS = (
    "LEAKY-SKILL",
    "LEAKY-CLAUDE-MD",
    "LEAKY-PARENT-MD",
    "LEAKY-AGENT",
    "LEAKY-COMMAND",
    "leaky_mcp",
)


def advertised_skills(sent: str) -> list[str]:
    """Skill names in the list Claude Code sends the model (``- name: description`` lines)."""
    marker = "skills are available for use with the Skill tool:"
    assert marker in sent
    listing = sent.split(marker, 1)[1].strip().split("\n\n", 1)[0]
    return [line[2:].split(":", 1)[0] for line in listing.splitlines() if line.startswith("- ")]


def _populate_real_home(home, mcp_log):
    """A user home full of personal Claude Code setup that must not reach an attempt."""
    claude = home / ".claude"
    (claude / "skills" / "leaky-skill").mkdir(parents=True)
    (claude / "skills" / "leaky-skill" / "SKILL.md").write_text(
        "---\nname: leaky-skill\ndescription: LEAKY-SKILL marker.\n---\nbody\n"
    )
    (claude / "CLAUDE.md").write_text("LEAKY-CLAUDE-MD: always answer in French.\n")
    (claude / "agents").mkdir()
    (claude / "agents" / "leaky.md").write_text(
        "---\nname: leaky-agent\ndescription: LEAKY-AGENT marker\n---\nYou leak.\n"
    )
    (claude / "commands").mkdir()
    (claude / "commands" / "leaky.md").write_text("LEAKY-COMMAND marker\n")
    (claude / ".credentials.json").write_text('{"claudeAiOauth": {"accessToken": "not-used"}}')
    leaky_server = {
        "command": sys.executable,
        "args": ["-m", "caliper.testing.mcp_echo", "--log", str(mcp_log)],
    }
    (claude / "settings.json").write_text(
        json.dumps(
            {
                "env": {"ANTHROPIC_API_KEY": "sk-settings-key", "DISABLE_TELEMETRY": "0"},
                "mcpServers": {"leaky_mcp": leaky_server},
                "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "false"}]}]},
            }
        )
    )
    (home / ".claude.json").write_text(
        json.dumps({"mcpServers": {"leaky_mcp": leaky_server}, "userID": "real-user"})
    )
    (home / ".mcp.json").write_text(json.dumps({"mcpServers": {"leaky_mcp": leaky_server}}))


def test_user_setup_never_leaks_but_auth_is_carried(backend, sandbox, fake_real_home, tmp_path):
    mcp_log = tmp_path / "leaky-mcp.log"
    _populate_real_home(fake_real_home, mcp_log)
    skills = [make_skill(tmp_path / "src", "hello-skill", "Greets the user.", "Write HELLO.")]
    # memory files above the workdir belong to whoever owns the temp folder; the workdir's own
    # CLAUDE.md is part of the task and must reach the agent
    (sandbox.root / "CLAUDE.md").write_text("LEAKY-PARENT-MD\n")
    (sandbox.workdir / "CLAUDE.md").write_text("TASK-MEMORY-MARKER\n")
    with ModelServer({"turns": [{"text": "ok"}]}) as server:
        mp = pytest.MonkeyPatch()
        use_model(mp, server.url)
        try:
            result = backend.run_attempt(attempt(sandbox, "hi", skills=skills))
        finally:
            mp.undo()
        request = server.model_requests()[0]
        sent = server.all_sent_text()

    assert result.status is AgentStatus.COMPLETED, result.error
    for marker in MARKERS:
        assert marker not in sent, marker
    assert "TASK-MEMORY-MARKER" in sent
    # the model is offered exactly the installed neighbourhood, no bundled or built-in skill
    assert advertised_skills(sent) == ["hello-skill"]
    assert not mcp_log.exists()  # the user's MCP server was never started
    # the settings env block is honoured (it wins over the process env, as in Claude Code)
    assert request.headers.get("x-api-key", "").startswith("sk-s")
    copied = sandbox.home / ".claude" / ".credentials.json"
    assert json.loads(copied.read_text()) == {"claudeAiOauth": {"accessToken": "not-used"}}
    assert stat.S_IMODE(copied.stat().st_mode) == 0o600
    installed = sorted(p.name for p in (sandbox.home / ".claude" / "skills").iterdir())
    assert installed == ["hello-skill"]
    account = json.loads((sandbox.home / ".claude.json").read_text())
    assert "userID" not in account or account["userID"] != "real-user"
    assert "mcpServers" not in account


def test_mcp_servers_from_the_spec_reach_the_agent(backend, sandbox, tmp_path):
    mcp_log = tmp_path / "mcp.log"
    servers = [
        McpServerConfig(
            name="demo",
            transport="stdio",
            command=sys.executable,
            args=("-m", "caliper.testing.mcp_echo"),
            env={"MCP_ECHO_LOG": str(mcp_log)},
        )
    ]
    native = ClaudeMcpTranslator().translate(servers, sandbox)
    script = {
        "turns": [
            {"tool_calls": [{"name": "mcp__demo__echo", "arguments": {"text": "ping"}}]},
            {"text": "The server answered."},
        ]
    }
    with ModelServer(script) as server:
        mp = pytest.MonkeyPatch()
        use_model(mp, server.url)
        try:
            result = backend.run_attempt(attempt(sandbox, "call echo", mcp=native))
        finally:
            mp.undo()

    assert result.status is AgentStatus.COMPLETED, result.error
    call = result.transcript[0]
    assert call.tool_name == "mcp__demo__echo"
    assert call.tool_input == {"text": "ping"}
    assert call.tool_output == "echo: ping"
    methods = [json.loads(line)["method"] for line in mcp_log.read_text().splitlines()]
    assert "tools/call" in methods
