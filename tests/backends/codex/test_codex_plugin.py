"""The plugin module: what it registers, model names, binary lookup, update info."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from caliper.host.plugins import PluginHost
from caliper.plugin.attempt import AgentStatus, AttemptSandbox, McpServerConfig
from caliper.system.process import ProcessResult
from caliper_backend_codex import errors, invocation, locate, plugin
from caliper_backend_codex.backend import CodexBackend
from caliper_backend_codex.events import parse_events
from caliper_backend_codex.mcp import CodexMcpTranslator, tables_of


def test_registered_through_entry_points() -> None:
    host = PluginHost()
    backend = host.backends(["codex"])["codex"]
    assert isinstance(backend, CodexBackend)
    assert backend.cli_name == "codex"
    assert backend.cli_path_variable == "CODEX_CLI_PATH"
    assert backend.install_hint == "npm install -g @openai/codex"
    assert backend.supports_mcp() is True
    assert backend.default_model is None
    assert host.skill_installer("codex").id == "codex"
    assert host.mcp_translator("codex").id == "codex"


@pytest.mark.parametrize(
    ("model", "claimed"),
    [
        ("gpt-5.5", True),
        ("GPT-4o", True),
        ("o1", True),
        ("o3-mini", True),
        ("o4-mini", True),
        ("codex-mini-latest", True),
        ("claude-sonnet-4-5", False),
        ("o2", False),
        ("ollama", False),
        ("opus", False),
        ("gemini-2.5-pro", False),
    ],
)
def test_claims_openai_models(model: str, claimed: bool) -> None:
    assert CodexBackend().claims_model(model) is claimed


def test_update_info_is_the_backends_own_method(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not hasattr(plugin, "cli_update_info")  # no hook boilerplate left
    monkeypatch.setenv("CODEX_CLI_PATH", "/nonexistent/codex")
    update = CodexBackend().update_info(check_latest=False)
    assert update.backend == "codex"
    assert update.installed is None and update.latest is None
    assert update.update_command == "npm install -g @openai/codex@latest"
    assert "not installed" in (update.note or "")


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho codex-cli 9.9.9\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_lookup_order(tmp_path: Path) -> None:
    on_path = _executable(tmp_path / "bin" / "codex")
    app = _executable(tmp_path / "home" / "Applications" / "Codex.app" / "Contents/Resources/codex")
    env = {"PATH": str(on_path.parent), "HOME": str(tmp_path / "home")}
    assert locate.find_codex(env, platform="darwin") == app
    assert locate.find_codex(env, platform="linux") == on_path
    chosen = {**env, "CODEX_CLI_PATH": str(on_path)}
    assert locate.find_codex(chosen, platform="darwin") == on_path
    missing = {**env, "CODEX_CLI_PATH": str(tmp_path / "nope")}
    assert locate.find_codex(missing, platform="darwin") is None
    assert locate.find_codex({"PATH": "", "HOME": str(tmp_path)}, platform="linux") is None
    assert locate.is_app_binary(app) and not locate.is_app_binary(on_path)


def test_argv_reads_the_prompt_from_stdin() -> None:
    argv = invocation.attempt_argv(Path("/x/codex"), model="gpt-5.5")
    assert argv[-1] == "-" and argv[1:3] == ["exec", "--json"]
    assert "--dangerously-bypass-approvals-and-sandbox" in argv
    assert "--skip-git-repo-check" in argv
    assert argv[argv.index("--model") + 1] == "gpt-5.5"
    assert "--model" not in invocation.attempt_argv(Path("/x/codex"), model=None)
    judge = invocation.prompt_argv(Path("/x/codex"), model=None)
    assert judge[judge.index("--sandbox") + 1] == "read-only"
    assert "--dangerously-bypass-approvals-and-sandbox" not in judge and judge[-1] == "-"


def test_mcp_tables(tmp_path: Path) -> None:
    sandbox = AttemptSandbox(tmp_path, tmp_path, tmp_path, tmp_path, tmp_path, {})
    servers = [
        McpServerConfig("local", "stdio", command="npx", args=("-y", "srv"), env={"K": "v"}),
        McpServerConfig("remote", "http", url="https://mcp.example/mcp", headers={"A": "b"}),
        McpServerConfig("legacy", "sse", url="https://mcp.example/sse"),
    ]
    native = CodexMcpTranslator().translate(servers, sandbox)
    tables = tables_of(native)
    wrapper = 'exec env K="$CALIPER_MCP_SECRET_0" "$@"'
    assert tables == {
        "local": {
            "command": "/bin/sh",
            "args": ["-c", wrapper, "caliper-mcp-env", "npx", "-y", "srv"],
            "env_vars": ["CALIPER_MCP_SECRET_0"],
            "required": True,
        },
        "remote": {
            "url": "https://mcp.example/mcp",
            "env_http_headers": {"A": "CALIPER_MCP_SECRET_1"},
            "required": True,
        },
        "legacy": {"url": "https://mcp.example/sse", "required": True},
    }
    # the resolved values travel only in codex's environment, never in the tables
    assert native.env == {"CALIPER_MCP_SECRET_0": "v", "CALIPER_MCP_SECRET_1": "b"}
    assert not os.listdir(tmp_path)  # nothing written until the backend writes config.toml
    assert tables_of(None) == {}


def _process(rc: int | None, stderr: str = "", timed_out: bool = False) -> ProcessResult:
    return ProcessResult(("codex",), rc, "", stderr, timed_out, False, 1.0)


@pytest.mark.parametrize(
    ("message", "status"),
    [
        ("unexpected status 401 Unauthorized: Incorrect API key provided", AgentStatus.SETUP_ERROR),
        ("Missing environment variable: `CORP_KEY`.", AgentStatus.SETUP_ERROR),
        ("unexpected status 403 Forbidden", AgentStatus.SETUP_ERROR),
        ("The model `gpt-9` does not exist or you do not have access", AgentStatus.SETUP_ERROR),
        ("exceeded retry limit, last status: 429 Too Many Requests", AgentStatus.INFRA_ERROR),
        ("We're currently experiencing high demand", AgentStatus.INFRA_ERROR),
        ("stream disconnected before completion: The model crashed", AgentStatus.INFRA_ERROR),
        ("Codex ran out of room in the model's context window.", AgentStatus.TASK_FAILED),
    ],
)
def test_failure_messages(message: str, status: AgentStatus) -> None:
    assert errors.classify_message(message) is status


def test_no_events_at_all() -> None:
    empty = parse_events("")
    config = errors.classify(_process(1, "Error loading config.toml: bad key"), empty, timeout=9)
    assert config.status is AgentStatus.SETUP_ERROR and "config.toml" in (config.error or "")
    old = errors.classify(_process(2, "error: unexpected argument '--json'"), empty, timeout=9)
    assert old.status is AgentStatus.SETUP_ERROR and "too old" in (old.error or "")
    crash = errors.classify(_process(139, "Segmentation fault"), empty, timeout=9)
    assert crash.status is AgentStatus.INFRA_ERROR and "Segmentation fault" in (crash.error or "")
    quiet = errors.classify(_process(0), empty, timeout=9)
    assert quiet.status is AgentStatus.INFRA_ERROR


def test_timeout_mentions_the_retry_loop() -> None:
    run = parse_events(
        '{"type":"error","message":"Reconnecting... waiting for network (Connection failed)"}\n'
    )
    outcome = errors.classify(_process(None, timed_out=True), run, timeout=5)
    assert outcome.status is AgentStatus.TIMEOUT
    assert "5s" in (outcome.error or "") and "waiting for network" in (outcome.error or "")
