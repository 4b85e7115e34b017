"""Registration, model claims, skill installation, MCP translation, seeding and versions."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from claude_support import claude_cli, make_skill, needs_claude

from caliper.errors import CaliperError
from caliper.host.plugins import PluginHost
from caliper.plugin.attempt import McpServerConfig
from caliper.plugin.backend import npm_update
from caliper.plugin.cli_versions import parse_version
from caliper.plugin.skills import ResolvedSkill
from caliper_backend_claude import home as claude_home
from caliper_backend_claude import plugin, versions
from caliper_backend_claude.backend import ClaudeCodeBackend
from caliper_backend_claude.mcp import ClaudeMcpTranslator
from caliper_backend_claude.skills import ClaudeSkillInstaller


def test_loading_the_backend_leaves_planted_conversations_unloaded():
    """A run whose tasks plant no conversation never needs the conversation model (four
    attrs classes built at import): the backend imports its module only for such a task."""
    probe = (
        "import sys\n"
        "from caliper_backend_claude import backend, plugin\n"
        "print(sorted(m for m in sys.modules if m.endswith('conversation')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_plugin_registers_backend_installer_and_translator():
    host = PluginHost([plugin], use_entry_points=False)
    backend = host.backends(["claude-code"])["claude-code"]
    assert backend.id == "claude-code"
    assert backend.aliases == ("claude",)
    assert backend.cli_name == "claude" and backend.cli_path_variable == "CLAUDE_CLI_PATH"
    assert backend.install_hint == "npm install -g @anthropic-ai/claude-code"
    assert backend.supports_mcp() is True
    assert host.skill_installer("claude-code").id == "claude-code"
    assert host.mcp_translator("claude-code").id == "claude-code"


@pytest.mark.parametrize(
    ("model", "claimed"),
    [
        ("claude-sonnet-4-5", True),
        ("claude-opus-4-8", True),
        ("opus", True),
        ("Sonnet", True),
        ("haiku", True),
        ("gpt-5.5", False),
        ("anthropic/claude-opus-4-8", False),
        ("default", False),
    ],
)
def test_claims_model(model, claimed):
    assert ClaudeCodeBackend().claims_model(model) is claimed


def test_installer_copies_each_skill_under_its_frontmatter_name(sandbox, tmp_path):
    source = make_skill(tmp_path / "src", "folder-name", "Does X.", "Body")
    renamed = ResolvedSkill(name="pretty-name", description="Does X.", source_dir=source.source_dir)
    (source.source_dir / ".git").mkdir()
    installed = ClaudeSkillInstaller().install([renamed], sandbox)
    target = sandbox.home / ".claude" / "skills" / "pretty-name"
    assert installed[0].name == "pretty-name" and installed[0].skill_dir == target
    assert installed[0].skill_file.read_text().startswith("---\nname: folder-name")
    assert (target / "notes.txt").exists() and not (target / ".git").exists()


@pytest.mark.parametrize("name", ["../escape", "a/b", "", ".."])
def test_installer_refuses_names_that_are_not_folder_names(sandbox, tmp_path, name):
    source = make_skill(tmp_path / "src", "ok", "d", "b")
    bad = ResolvedSkill(name=name, description="d", source_dir=source.source_dir)
    with pytest.raises(CaliperError, match="cannot be a folder name"):
        ClaudeSkillInstaller().install([bad], sandbox)


def test_mcp_translator_writes_a_private_config(sandbox):
    servers = [
        McpServerConfig(
            name="local", transport="stdio", command="node", args=("s.js",), env={"K": "v"}
        ),
        McpServerConfig(
            name="remote",
            transport="http",
            url="https://x/mcp",
            headers={"Authorization": "Bearer s"},
        ),
        McpServerConfig(name="events", transport="sse", url="https://x/sse"),
    ]
    native = ClaudeMcpTranslator().translate(servers, sandbox)
    path = Path(native.argv[1])
    assert native.argv == ("--mcp-config", str(path))
    assert path.parent == sandbox.private
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {
        "mcpServers": {
            "local": {"type": "stdio", "command": "node", "args": ["s.js"], "env": {"K": "v"}},
            "remote": {
                "type": "http",
                "url": "https://x/mcp",
                "headers": {"Authorization": "Bearer s"},
            },
            "events": {"type": "sse", "url": "https://x/sse"},
        }
    }


def test_seeding_copies_only_authentication(sandbox, fake_real_home):
    claude = fake_real_home / ".claude"
    claude.mkdir()
    (claude / ".credentials.json").write_text('{"claudeAiOauth": {}}')
    (claude / "settings.json").write_text(
        json.dumps(
            {
                "apiKeyHelper": "/opt/get-key.sh",
                "env": {"ANTHROPIC_AUTH_TOKEN": "tok", "EDITOR": "vim", "DISABLE_TELEMETRY": "0"},
                "permissions": {"allow": ["Bash"]},
                "hooks": {"Stop": []},
            }
        )
    )
    (fake_real_home / ".claude.json").write_text(
        json.dumps(
            {
                "primaryApiKey": "sk-ant-x",
                "oauthAccount": {"a": 1},
                "mcpServers": {"m": {}},
                "projects": {},
            }
        )
    )
    settings_env = claude_home.seed_home(sandbox, environ={})
    assert settings_env == {"ANTHROPIC_AUTH_TOKEN": "tok"}
    home = sandbox.home
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert settings.pop("apiKeyHelper") == "/opt/get-key.sh"
    assert settings.pop("enabledPlugins") == {"cc-plugin-plugin-authoring@builtin": False}
    excluded = settings.pop("claudeMdExcludes")
    assert str(sandbox.root / "CLAUDE.md") in excluded and "/CLAUDE.md" in excluded
    assert not any(path.startswith(str(sandbox.workdir)) for path in excluded)
    assert settings == {}
    assert json.loads((home / ".claude.json").read_text()) == {
        "primaryApiKey": "sk-ant-x",
        "oauthAccount": {"a": 1},
    }
    for name in (".claude/.credentials.json", ".claude/settings.json", ".claude.json"):
        assert stat.S_IMODE((home / name).stat().st_mode) == 0o600


def test_seeding_reads_claude_config_dir_and_tolerates_broken_files(sandbox, tmp_path):
    config = tmp_path / "elsewhere"
    config.mkdir()
    (config / ".credentials.json").write_text("{}")
    (config / "settings.json").write_text("{not json")
    (config / ".claude.json").write_text('["not", "an", "object"]')
    assert claude_home.seed_home(sandbox, environ={"CLAUDE_CONFIG_DIR": str(config)}) == {}
    assert (sandbox.home / ".claude" / ".credentials.json").read_text() == "{}"
    assert not (sandbox.home / ".claude.json").exists()


def test_environment_forwards_auth_and_provider_variables_only(sandbox, fake_real_home):
    (fake_real_home / ".aws").mkdir()
    (fake_real_home / ".aws" / "credentials").write_text("[default]\n")
    environ = {
        "ANTHROPIC_API_KEY": "k",
        "CLAUDE_CODE_OAUTH_TOKEN": "o",
        "CLAUDE_CODE_USE_BEDROCK": "1",
        "AWS_REGION": "eu-west-1",
        "CLAUDE_CODE_SKIP_BEDROCK_AUTH": "1",
        "HTTPS_PROXY": "http://proxy:3128",
        "CLAUDE_CONFIG_DIR": "/real/config",
        "GITHUB_TOKEN": "secret",
        "OPENAI_API_KEY": "secret",
        "DISABLE_TELEMETRY": "0",
    }
    env = claude_home.build_env(
        sandbox, {"ANTHROPIC_MODEL": "claude-x", "DISABLE_AUTOUPDATER": "0"}, environ
    )
    for name in (
        "ANTHROPIC_API_KEY",
        "CLAUDE_CODE_OAUTH_TOKEN",
        "AWS_REGION",
        "HTTPS_PROXY",
        "ANTHROPIC_MODEL",
    ):
        assert name in env
    assert env["CLAUDE_CODE_SKIP_BEDROCK_AUTH"] == "1"
    assert (
        "GITHUB_TOKEN" not in env and "OPENAI_API_KEY" not in env and "CLAUDE_CONFIG_DIR" not in env
    )
    assert env["DISABLE_TELEMETRY"] == env["DISABLE_AUTOUPDATER"] == "1"
    assert env["AWS_SHARED_CREDENTIALS_FILE"] == str(fake_real_home / ".aws" / "credentials")
    assert "AWS_CONFIG_FILE" not in env  # that file does not exist
    assert env["HOME"] == str(sandbox.home)


def test_update_info_without_network_and_without_npm(monkeypatch):
    info = npm_update("claude-code", "2.1.332", versions.NPM_PACKAGE, check_latest=False)
    assert info.installed == "2.1.332" and info.latest is None and info.note is None
    assert info.update_command == "npm install -g @anthropic-ai/claude-code@latest"
    monkeypatch.setenv("PATH", "/nonexistent")
    info = npm_update("claude-code", "2.1.332", versions.NPM_PACKAGE, check_latest=True)
    assert info.latest is None and "npm was not found" in info.note


def test_update_info_is_the_backends_own_method(clean_env, tmp_path):
    assert not hasattr(plugin, "cli_update_info")  # no hook boilerplate left
    clean_env.setenv("CLAUDE_CLI_PATH", str(tmp_path / "missing"))
    info = ClaudeCodeBackend().update_info(False)
    assert info.installed is None and "not installed" in info.note
    assert info.backend == "claude-code"


@pytest.mark.e2e
@needs_claude
def test_cli_version_of_the_pinned_cli(clean_env, tmp_path):
    clean_env.setenv("HOME", str(tmp_path / "must-stay-untouched"))
    assert ClaudeCodeBackend().cli_version(claude_cli()) == "2.1.332"
    assert not (tmp_path / "must-stay-untouched").exists()


def test_cli_version_of_a_broken_cli_is_none(tmp_path):
    broken = tmp_path / "claude"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    assert ClaudeCodeBackend().cli_version(broken) is None
    assert parse_version("2.1.332 (Claude Code)") == "2.1.332"
