"""Pure rules of the pi backend: activation, error classification, agent-dir seeding."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from pi_support import write_json

from caliper.errors import SetupError
from caliper.host.plugins import PluginHost
from caliper.plugin.attempt import AgentStatus, InstalledSkill
from caliper.plugin.backend import CliUpdate
from caliper.system.process import ProcessResult
from caliper_backend_pi import plugin
from caliper_backend_pi.activation import activated_skills
from caliper_backend_pi.backend import PiBackend
from caliper_backend_pi.errors import classify_error_message, classify_run
from caliper_backend_pi.events import PiRun, ToolCall
from caliper_backend_pi.home import (
    attempt_env,
    attempt_settings,
    foreign_skill_folders,
    has_default_model,
    prepare_agent_dir,
    user_agent_dir,
)

HOME = Path("/box/home")
CWD = Path("/box/work")
ROOT = HOME / ".pi/agent/skills"
SKILLS = [
    InstalledSkill("alpha", "A.", ROOT / "alpha"),
    InstalledSkill("beta", "B.", ROOT / "beta"),
]


def reads(*calls: tuple[str, dict], error: bool = False) -> list[str]:
    made = [ToolCall(str(i), n, a, "out", error) for i, (n, a) in enumerate(calls)]
    return activated_skills(made, SKILLS, cwd=CWD, home=HOME)


@pytest.mark.parametrize(
    "path",
    [
        str(ROOT / "alpha/SKILL.md"),
        "@" + str(ROOT / "alpha/SKILL.md"),
        "~/.pi/agent/skills/alpha/SKILL.md",
        "../home/.pi/agent/skills/alpha/SKILL.md",
        str(ROOT / "beta/../alpha/./SKILL.md"),
    ],
)
def test_read_of_the_skill_file_activates_it(path):
    assert reads(("read", {"path": path})) == ["alpha"]


@pytest.mark.parametrize(
    "path",
    [
        str(ROOT),
        str(ROOT / "alpha"),
        str(ROOT / "alpha/reference.md"),
        str(ROOT / "alpha/SKILL.md.bak"),
        "SKILL.md",
        str(ROOT / "gamma/SKILL.md"),
    ],
)
def test_other_reads_are_not_activation(path):
    assert reads(("read", {"path": path})) == []


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (f"cat {ROOT}/beta/SKILL.md", ["beta"]),
        (f"cd {ROOT}/beta && cat SKILL.md", ["beta"]),
        (f"head -n 50 '{ROOT}/alpha/SKILL.md' | grep x", ["alpha"]),
        ("sed -n 1,40p ~/.pi/agent/skills/alpha/SKILL.md", ["alpha"]),
        ('cat "$HOME/.pi/agent/skills/alpha/SKILL.md"', ["alpha"]),
        ("cat ${PI_CODING_AGENT_DIR}/skills/beta/SKILL.md 2>/dev/null", ["beta"]),
        (f"ls {ROOT}/alpha", []),
        (f"grep -r name {ROOT}", []),
        (f"echo {ROOT}/alpha/SKILL.md", []),
        (f"cat {ROOT}/alpha/notes.md", []),
    ],
)
def test_shell_reads(command, expected):
    assert reads(("bash", {"command": command})) == expected


def test_order_is_first_read_and_failed_reads_do_not_count():
    assert reads(
        ("read", {"path": str(ROOT / "beta/SKILL.md")}),
        ("read", {"path": str(ROOT / "alpha/SKILL.md")}),
        ("read", {"path": str(ROOT / "beta/SKILL.md")}),
    ) == ["beta", "alpha"]
    assert reads(("read", {"path": str(ROOT / "alpha/SKILL.md")}), error=True) == []


@pytest.mark.parametrize(
    ("message", "status"),
    [
        ("401 Invalid API key", AgentStatus.SETUP_ERROR),
        ('403: {"message":"forbidden"}', AgentStatus.SETUP_ERROR),
        ("No API key found for anthropic.", AgentStatus.SETUP_ERROR),
        ("429 Rate limit exceeded", AgentStatus.INFRA_ERROR),
        ('429: {"message":"slow down"}', AgentStatus.INFRA_ERROR),
        ("500 Internal", AgentStatus.INFRA_ERROR),
        ("529 overloaded", AgentStatus.INFRA_ERROR),
        ("Connection error.", AgentStatus.INFRA_ERROR),
        ("", AgentStatus.INFRA_ERROR),
    ],
)
def test_error_messages(message, status):
    assert classify_error_message(message).status is status


def _assistant(**fields) -> dict:
    return {"role": "assistant", "content": [{"type": "text", "text": "hi"}], **fields}


def _process(code: int | None = 0, stderr: str = "", timed_out: bool = False) -> ProcessResult:
    return ProcessResult(("pi",), code, "", stderr, timed_out, False, 1.0)


def test_run_endings():
    ok = PiRun(messages=(_assistant(stopReason="stop"),), event_count=3)
    assert classify_run(_process(), ok, timeout=5).status is AgentStatus.COMPLETED
    aborted = PiRun(messages=(_assistant(stopReason="aborted"),), event_count=3)
    assert classify_run(_process(), aborted, timeout=5).status is AgentStatus.INFRA_ERROR
    cut = PiRun(messages=({"role": "assistant", "content": [], "stopReason": "length"},))
    assert classify_run(_process(), cut, timeout=5).status is AgentStatus.TASK_FAILED
    timed = classify_run(_process(None, timed_out=True), ok, timeout=5)
    assert timed.status is AgentStatus.TIMEOUT and "5s" in (timed.error or "")
    empty = classify_run(_process(), PiRun(), timeout=5)
    assert empty.status is AgentStatus.INFRA_ERROR
    no_key = classify_run(_process(1, "No API key found for google."), PiRun(), timeout=5)
    assert no_key.status is AgentStatus.SETUP_ERROR and "No API key" in (no_key.error or "")
    crash = classify_run(_process(1, "TypeError: boom"), PiRun(), timeout=5)
    assert crash.status is AgentStatus.INFRA_ERROR and "boom" in (crash.error or "")


def test_attempt_settings_drop_resources_and_force_retry_off():
    user = {
        "defaultProvider": "anthropic",
        "defaultModel": "claude-x",
        "skills": ["/mine"],
        "extensions": ["/ext"],
        "packages": ["npm:foo"],
        "prompts": ["/p"],
        "themes": ["/t"],
        "retry": {"enabled": True, "maxRetries": 10},
        "quietStartup": False,
    }
    settings = attempt_settings(user)
    assert settings["defaultModel"] == "claude-x"
    for key in ("skills", "extensions", "packages", "prompts", "themes"):
        assert key not in settings
    assert settings["retry"]["enabled"] is False
    assert settings["retry"]["provider"]["maxRetries"] <= 2
    assert has_default_model(settings)
    assert not has_default_model({"defaultModel": "x"})
    assert has_default_model({"enabledModels": ["anthropic/*"]})


def test_user_agent_dir_honours_the_override(tmp_path):
    assert user_agent_dir(tmp_path, {}) == tmp_path / ".pi/agent"
    assert user_agent_dir(tmp_path, {"PI_CODING_AGENT_DIR": "/etc/pi"}) == Path("/etc/pi")
    assert user_agent_dir(tmp_path, {"PI_CODING_AGENT_DIR": "~/cfg"}) == tmp_path / "cfg"


def test_prepare_agent_dir_copies_auth_models_settings_only(sandbox, fake_user):
    fake_user.configure("http://127.0.0.1:9/v1")
    fake_user.plant_private_resources()
    write_json(fake_user.agent_dir / "auth.json", {"anthropic": {"type": "api_key", "key": "k"}})
    prepare_agent_dir(sandbox, environ={})
    target = sandbox.home / ".pi/agent"
    assert sorted(p.name for p in target.iterdir()) == ["auth.json", "models.json", "settings.json"]
    assert json.loads((target / "auth.json").read_text())["anthropic"]["key"] == "k"
    assert (target / "auth.json").stat().st_mode & 0o777 == 0o600


def test_prepare_agent_dir_reports_broken_settings(sandbox, fake_user):
    fake_user.agent_dir.mkdir(parents=True)
    (fake_user.agent_dir / "settings.json").write_text("{not json")
    with pytest.raises(SetupError) as raised:
        prepare_agent_dir(sandbox, environ={})
    assert "settings.json" in raised.value.message


def test_attempt_env_passes_provider_keys_and_offline_switches(sandbox, fake_user):
    fake_user.configure("http://127.0.0.1:9/v1")
    models = json.loads((fake_user.agent_dir / "models.json").read_text())
    models["providers"]["fake"]["apiKey"] = "MY_PROXY_KEY"
    write_json(fake_user.agent_dir / "models.json", models)
    prepare_agent_dir(sandbox, environ={})
    environ = {"ANTHROPIC_API_KEY": "a", "MY_PROXY_KEY": "b", "GITHUB_TOKEN": "no", "SECRET": "no"}
    env = attempt_env(sandbox, environ)
    assert env["ANTHROPIC_API_KEY"] == "a" and env["MY_PROXY_KEY"] == "b"
    assert "GITHUB_TOKEN" not in env and "SECRET" not in env
    assert env["PI_CODING_AGENT_DIR"] == str(sandbox.home / ".pi/agent")
    assert env["HOME"] == str(sandbox.home)
    assert (env["PI_OFFLINE"], env["PI_TELEMETRY"], env["PI_SKIP_VERSION_CHECK"]) == ("1", "0", "1")


def test_plugin_registers_backend_installer_and_translator(monkeypatch, tmp_path):
    monkeypatch.setenv("PI_CLI_PATH", str(tmp_path / "missing"))
    host = PluginHost([plugin], use_entry_points=False)
    backend = host.backends()["pi"]
    assert backend.cli_name == "pi" and backend.cli_path_variable == "PI_CLI_PATH"
    assert backend.supports_mcp() is False  # no pi found: nothing to vouch for
    assert "pi was not found" in backend.mcp_refusal()
    assert host.skill_installer("pi") is not None
    assert host.mcp_translator("pi") is not None
    assert backend.install_hint == "npm install -g @earendil-works/pi-coding-agent"


def test_update_info_without_network(monkeypatch, tmp_path):
    monkeypatch.setenv("PI_CLI_PATH", str(tmp_path / "missing"))
    info = PiBackend().update_info(check_latest=False)
    assert isinstance(info, CliUpdate)
    assert info.installed is None and info.latest is None
    assert "npm install -g @earendil-works/pi-coding-agent" in (info.note or "")
    assert not hasattr(plugin, "cli_update_info")  # the backend answers, no hook boilerplate


def test_skills_above_the_sandbox_are_refused(sandbox, tmp_path):
    """pi scans .agents/skills up the tree; a sandbox under such a folder must not run."""
    assert foreign_skill_folders(sandbox) == []
    (sandbox.workdir / ".agents" / "skills" / "own").mkdir(parents=True)
    assert foreign_skill_folders(sandbox) == []  # the task's own folder is fine
    above = tmp_path / ".agents" / "skills" / "project-skill"
    above.mkdir(parents=True)
    (above / "SKILL.md").write_text("---\nname: project-skill\ndescription: x\n---\n")
    assert foreign_skill_folders(sandbox) == [tmp_path / ".agents" / "skills"]
    with pytest.raises(SetupError) as raised:
        PiBackend()._prepare(sandbox, "fake/fake-model")
    assert "CALIPER_TMPDIR" in raised.value.render()
    assert str(tmp_path / ".agents" / "skills") in raised.value.message


def test_git_root_bounds_the_skill_scan(sandbox, tmp_path):
    above = tmp_path.parent / ".agents" / "skills" / "outer"
    (tmp_path / ".git").mkdir()
    try:
        above.mkdir(parents=True)
        (above / "SKILL.md").write_text("x")
        assert foreign_skill_folders(sandbox) == []
    finally:
        shutil.rmtree(tmp_path.parent / ".agents")


def _fake_npm(folder: Path, script: str) -> str:
    """A stand-in ``npm`` on PATH (a real process; no registry is contacted)."""
    folder.mkdir()
    npm = folder / "npm"
    npm.write_text(f"#!/bin/sh\n{script}\n")
    npm.chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ['PATH']}"


def test_update_info_reads_npm_view_and_warns_about_node(monkeypatch, tmp_path):
    if shutil.which("node") is None:
        pytest.skip("needs node on PATH")
    view = '{"version": "9.9.9", "engines": {"node": ">=99.0.0"}}'
    monkeypatch.setenv("PATH", _fake_npm(tmp_path / "bin", f"echo '{view}'"))
    monkeypatch.setenv("PI_CLI_PATH", str(tmp_path / "missing"))
    info = PiBackend().update_info(check_latest=True)
    assert info.latest == "9.9.9"
    assert "Node >=99.0.0" in (info.note or "")
    assert info.update_command == "npm install -g @earendil-works/pi-coding-agent@latest"


def test_update_info_turns_npm_failure_into_a_note(monkeypatch, tmp_path):
    failing = "echo 'npm error code E404' >&2; exit 1"
    monkeypatch.setenv("PATH", _fake_npm(tmp_path / "bin", failing))
    monkeypatch.setenv("PI_CLI_PATH", str(tmp_path / "missing"))
    info = PiBackend().update_info(check_latest=True)
    assert info.latest is None
    assert "E404" in (info.note or "")
