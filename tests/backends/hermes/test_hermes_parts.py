"""The Hermes backend's pieces, without running Hermes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from hermes_support import PINNED_HERMES, FakeUser, make_skill

from caliper.errors import SetupError, UsageError
from caliper.host.plugins import PluginHost
from caliper.plugin.attempt import (
    AgentStatus,
    AttemptRequest,
    AttemptSandbox,
    InstalledSkill,
    McpServerConfig,
    Usage,
)
from caliper_backend_hermes import plugin
from caliper_backend_hermes.backend import HermesBackend
from caliper_backend_hermes.errors import (
    classify_api_failure,
    classify_no_session,
    session_error_lines,
)
from caliper_backend_hermes.events import activated_skills, parse_export, transcript
from caliper_backend_hermes.home import (
    MCP_DISCOVERY_WAIT,
    neutral_config,
    passed_variables,
    prepare_home,
    read_user_config,
    user_hermes_home,
)
from caliper_backend_hermes.invocation import (
    MAX_ARGUMENT_BYTES,
    chat_command,
    console_script_python,
    model_options,
    split_model,
)
from caliper_backend_hermes.mcp import HermesMcpTranslator
from caliper_backend_hermes.skills import HermesSkillInstaller

FIXTURES = Path(__file__).parent / "fixtures"
CONSOLE_SCRIPT = "#!{python}\nimport sys\nfrom hermes_cli.main import main\nsys.exit(main())\n"


# model selection -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (None, (None, None)),
        ("", (None, None)),
        ("gpt-x", (None, "gpt-x")),
        ("anthropic/claude-opus-4-8", ("anthropic", "claude-opus-4-8")),
        ("openrouter/anthropic/claude-sonnet-4", ("openrouter", "anthropic/claude-sonnet-4")),
    ],
)
def test_split_model(text: str | None, expected: tuple[str | None, str | None]) -> None:
    assert split_model(text) == expected


def test_model_options_name_provider_and_model() -> None:
    assert model_options("nous/Hermes-4") == ["--provider=nous", "--model=Hermes-4"]
    assert model_options(None) == []


@pytest.mark.parametrize("bad", ["openrouter/", "/model"])
def test_half_a_model_spec_is_a_usage_error(bad: str) -> None:
    with pytest.raises(UsageError, match="<provider>/<model>"):
        split_model(bad)


# launching -------------------------------------------------------------------------------
def test_console_script_runs_through_its_python_with_the_prompt_on_stdin(tmp_path: Path) -> None:
    python = shutil.which("python3")
    assert python
    cli = tmp_path / "hermes"
    cli.write_text(CONSOLE_SCRIPT.format(python=python))
    launch = chat_command(cli, "-p looks like a flag", ["--quiet"])
    assert launch.argv[:2] == (python, "-c")
    assert launch.argv[3:] == (str(cli), "--quiet")
    assert launch.stdin_text == "-p looks like a flag"
    assert "-p looks like a flag" not in launch.argv


def test_long_shebang_trampoline_is_understood(tmp_path: Path) -> None:
    python = shutil.which("python3")
    cli = tmp_path / "hermes"
    cli.write_text(
        f"#!/bin/sh\n'''exec' \"{python}\" \"$0\" \"$@\"\n' '''\n"
        "from hermes_cli.main import main\nmain()\n"
    )
    assert console_script_python(cli) == Path(str(python))


def test_other_executables_get_the_prompt_as_one_argument(tmp_path: Path) -> None:
    cli = tmp_path / "hermes"
    cli.write_text('#!/bin/sh\nexec real-hermes "$@"\n')
    launch = chat_command(cli, "hello", ["--quiet"])
    assert launch.argv == (str(cli), "chat", "--query=hello", "--quiet")
    assert launch.stdin_text is None


def test_prompt_too_long_for_an_argument_is_a_clear_error(tmp_path: Path) -> None:
    cli = tmp_path / "hermes"
    cli.write_text('#!/bin/sh\nexec real-hermes "$@"\n')
    with pytest.raises(UsageError, match="too long") as caught:
        chat_command(cli, "x" * MAX_ARGUMENT_BYTES, [])
    assert "HERMES_CLI_PATH" in (caught.value.hint or "")


# the isolated home -----------------------------------------------------------------------
def test_neutral_config_keeps_the_model_and_switches_off_the_rest() -> None:
    user = {
        "model": {"provider": "openrouter", "default": "x/y"},
        "security": {"allow_lazy_installs": True, "redact_secrets": True},
        "agent": {"api_max_retries": 9},
        "memory": {"memory_enabled": True, "provider": "mem0"},
        "skills": {"external_dirs": ["~/team-skills"]},
        "hooks": {"pre_tool": [{"command": "notify-send"}]},
        "mcp_servers": {"personal": {"command": "x"}},
        "display": {"personality": "pirate"},
        "worktree": True,
    }
    config = neutral_config(user, {"demo": {"command": "y"}})
    assert config["model"] == user["model"]
    assert config["security"] == {
        "allow_lazy_installs": False,
        "redact_secrets": True,
        "tirith_enabled": False,
    }
    assert config["agent"]["api_max_retries"] == 2
    assert config["memory"]["memory_enabled"] is False and config["memory"]["provider"] == ""
    assert config["memory"]["nudge_interval"] == 0
    assert config["skills"]["external_dirs"] == []
    assert config["skills"]["creation_nudge_interval"] == 0
    assert config["hooks"] == {} and config["worktree"] is False
    assert config["clarify"] == {"timeout": 0}
    assert config["display"]["personality"] == ""
    assert config["mcp_servers"] == {"demo": {"command": "y"}}
    assert user["mcp_servers"] == {"personal": {"command": "x"}}  # the input is not modified
    assert config["mcp_discovery_timeout"] == MCP_DISCOVERY_WAIT
    assert "mcp_discovery_timeout" not in neutral_config(user)


def test_prepare_home_copies_only_login_and_config(tmp_path: Path) -> None:
    user = FakeUser(tmp_path / "real")
    user.configure(None)
    user.add_personal_state()
    target = tmp_path / "attempt" / ".hermes"
    prepare_home(target, user.hermes, version="0.19.0")
    assert sorted(p.name for p in target.iterdir()) == [
        ".env",
        ".no-bundled-skills",
        ".update_check",
        "auth.json",
        "config.yaml",
        "skills",
    ]
    assert list((target / "skills").iterdir()) == []
    assert oct((target / ".env").stat().st_mode & 0o777) == "0o600"
    stamp = json.loads((target / ".update_check").read_text())
    assert stamp["ver"] == "0.19.0" and stamp["behind"] == 0
    config = yaml.safe_load((target / "config.yaml").read_text())
    assert config["model"]["provider"] == "custom"
    assert config["security"]["allow_lazy_installs"] is False


def test_user_home_follows_hermes_home_and_sticky_profiles(tmp_path: Path) -> None:
    real = tmp_path / "real"
    assert user_hermes_home(real, {}) == real / ".hermes"
    custom = tmp_path / "custom-home"
    assert user_hermes_home(real, {"HERMES_HOME": str(custom)}) == custom
    (real / ".hermes" / "profiles" / "coder").mkdir(parents=True)
    (real / ".hermes" / "active_profile").write_text("coder\n")
    assert user_hermes_home(real, {}) == real / ".hermes" / "profiles" / "coder"
    (real / ".hermes" / "active_profile").write_text("missing\n")
    assert user_hermes_home(real, {}) == real / ".hermes"


def test_broken_user_config_is_a_setup_error(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text("model: [unclosed\n")
    with pytest.raises(SetupError, match="not valid YAML"):
        read_user_config(tmp_path)
    (tmp_path / "config.yaml").write_text("- a list\n")
    with pytest.raises(SetupError, match="not a mapping"):
        read_user_config(tmp_path)


def test_run_attempt_reports_a_broken_config_without_running_hermes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = tmp_path / "bin" / "hermes"
    cli.parent.mkdir()
    marker = tmp_path / "ran"
    cli.write_text(f"#!/bin/sh\ntouch {marker}\n")
    cli.chmod(0o755)
    monkeypatch.setenv("HERMES_CLI_PATH", str(cli))
    sandbox = _sandbox(tmp_path)
    (sandbox.real_home / ".hermes").mkdir(parents=True)
    (sandbox.real_home / ".hermes" / "config.yaml").write_text("model: [unclosed\n")
    result = HermesBackend().run_attempt(
        AttemptRequest(prompt="hi", model=None, sandbox=sandbox, timeout=10)
    )
    assert result.status is AgentStatus.SETUP_ERROR
    assert "not valid YAML" in (result.error or "")
    assert not marker.exists()


def test_missing_cli_is_a_setup_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_CLI_PATH", str(tmp_path / "nowhere" / "hermes"))
    result = HermesBackend().run_attempt(
        AttemptRequest(prompt="hi", model=None, sandbox=_sandbox(tmp_path), timeout=10)
    )
    assert result.status is AgentStatus.SETUP_ERROR
    assert "HERMES_CLI_PATH" in (result.error or "")


def test_provider_keys_and_config_references_are_passed_on(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("model:\n  api_key: ${MY_GATEWAY_TOKEN}\n")
    environ = {
        "OPENROUTER_API_KEY": "a",
        "MY_GATEWAY_TOKEN": "b",
        "AWS_SECRET_ACCESS_KEY": "c",
        "HERMES_INFERENCE_MODEL": "d",
    }
    assert passed_variables(config, environ) == {"OPENROUTER_API_KEY": "a", "MY_GATEWAY_TOKEN": "b"}


# session export --------------------------------------------------------------------------
def _skill(name: str, root: Path = Path("/h/.hermes/skills/workspace")) -> InstalledSkill:
    return InstalledSkill(name, "d", root / name)


def test_parse_a_real_export() -> None:
    session = parse_export((FIXTURES / "session-skill-view.jsonl").read_text())
    assert session is not None
    assert session.model == "caliper-test-model"
    assert session.usage == Usage(600, 27, 200, 0)
    assert session.final_answer == "HELLO done"
    turns = transcript(session.messages)
    assert [t.role for t in turns] == ["user", "assistant", "tool", "assistant"]
    assert turns[2].tool_name == "skill_view" and turns[2].tool_input == {"name": "hello-skill"}
    assert '"success": true' in (turns[2].tool_output or "") and turns[2].is_error is False
    assert activated_skills(turns, [_skill("other"), _skill("hello-skill")]) == ["hello-skill"]


def test_parse_export_picks_the_session_asked_for() -> None:
    rows = [
        {"id": "a", "started_at": 2, "model": "m-a", "messages": []},
        {"id": "b", "started_at": 1, "model": "m-b", "messages": []},
    ]
    text = "\n".join(json.dumps(r) for r in rows) + "\nnot json\n"
    assert parse_export(text, "b").model == "m-b"
    assert parse_export(text).model == "m-a"
    assert parse_export("") is None


def test_reading_skill_md_counts_as_activation_and_failed_tools_are_errors() -> None:
    root = Path("/h/.hermes/skills/workspace")
    messages = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "1",
                    "function": {
                        "name": "read_file",
                        "arguments": json.dumps({"path": f"{root}/beta/SKILL.md"}),
                    },
                },
                {"id": "2", "function": {"name": "skill_view", "arguments": '{"name": "alpha"}'}},
                {"id": "3", "function": {"name": "terminal", "arguments": '{"command": "false"}'}},
                {"id": "4", "function": {"name": "read_file", "arguments": '{"path": "notes.md"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "1", "content": '{"content": "x"}'},
        {"role": "tool", "tool_call_id": "2", "content": '{"success": true}'},
        {"role": "tool", "tool_call_id": "3", "content": '{"output": "", "exit_code": 1}'},
        {"role": "tool", "tool_call_id": "4", "content": "Tool 'x' does not exist."},
        {"role": "assistant", "content": "done"},
    ]
    turns = transcript(messages)
    assert [t.is_error for t in turns if t.role == "tool"] == [False, False, True, True]
    skills = [_skill("alpha"), _skill("beta"), _skill("gamma")]
    assert activated_skills(turns, skills) == ["beta", "alpha"]


# failures --------------------------------------------------------------------------------
def test_401_in_the_error_log_is_a_setup_error(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    shutil.copy(FIXTURES / "errors-401.log", tmp_path / "logs" / "errors.log")
    lines = session_error_lines(tmp_path, "20261130_181610_27347c")
    assert lines and all("check_fn" not in line for line in lines)
    failure = classify_api_failure(lines)
    assert failure.status is AgentStatus.SETUP_ERROR
    assert "401" in failure.error and "hermes model" in failure.error


def test_429_in_the_error_log_is_an_infra_error(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    shutil.copy(FIXTURES / "errors-429.log", tmp_path / "logs" / "errors.log")
    failure = classify_api_failure(session_error_lines(tmp_path, None))
    assert failure.status is AgentStatus.INFRA_ERROR
    assert "rate-limited" in failure.error


def test_unexplained_failure_is_an_infra_error_with_stderr() -> None:
    failure = classify_api_failure([], "Traceback (most recent call last):\nValueError: boom")
    assert failure.status is AgentStatus.INFRA_ERROR and "ValueError: boom" in failure.error
    assert classify_api_failure([]).status is AgentStatus.INFRA_ERROR


def test_no_session_is_a_setup_error_unless_hermes_crashed() -> None:
    setup = classify_no_session(1, "Hermes is not logged into Nous Portal.\n", "")
    assert setup.status is AgentStatus.SETUP_ERROR
    assert "hermes model" in setup.error and "not logged into Nous Portal" in setup.error
    crash = classify_no_session(1, "", "Traceback (most recent call last):\n  boom\nKeyError: x\n")
    assert crash.status is AgentStatus.INFRA_ERROR and "KeyError" in crash.error


# skills and MCP --------------------------------------------------------------------------
def test_installer_puts_skills_in_one_category_folder(tmp_path: Path) -> None:
    sandbox = _sandbox(tmp_path)
    skill = make_skill(tmp_path / "src", "hello-skill", "Greets.", {"ref.md": "r\n"})
    installed = HermesSkillInstaller().install([skill], sandbox)
    folder = sandbox.home / ".hermes" / "skills" / "workspace" / "hello-skill"
    assert installed == [InstalledSkill("hello-skill", "Greets.", folder)]
    assert (folder / "SKILL.md").is_file() and (folder / "ref.md").read_text() == "r\n"


def test_mcp_translator_keeps_secrets_in_the_environment(tmp_path: Path) -> None:
    servers = [
        McpServerConfig(
            name="local",
            transport="stdio",
            command="python3",
            args=("s.py",),
            env={"TOKEN": "stdio-secret"},
        ),
        McpServerConfig(
            name="remote",
            transport="http",
            url="https://x.test/mcp?k=url-secret",
            headers={"Authorization": "Bearer header-secret"},
        ),
        McpServerConfig(name="events", transport="sse", url="https://y.test/sse"),
    ]
    native = HermesMcpTranslator().translate(servers, _sandbox(tmp_path))
    block = native.data["mcp_servers"]
    dumped = json.dumps(block)
    for secret in ("stdio-secret", "url-secret", "header-secret"):
        assert secret not in dumped
        assert secret in "".join(native.env.values())
    assert block["local"]["command"] == "python3" and block["local"]["args"] == ["s.py"]
    token_ref = block["local"]["env"]["TOKEN"]
    assert native.env[token_ref[2:-1]] == "stdio-secret"
    assert "transport" not in block["remote"] and block["events"]["transport"] == "sse"
    assert set(block["remote"]["headers"]) == {"Authorization"}


# plugin ----------------------------------------------------------------------------------
def test_plugin_registers_backend_installer_and_translator() -> None:
    host = PluginHost()
    backend = host.backends(["hermes"])["hermes"]
    assert backend.cli_name == "hermes" and backend.supports_mcp() is True
    assert backend.cli_path_variable == "HERMES_CLI_PATH"
    assert host.skill_installer("hermes").id == "hermes"
    assert host.mcp_translator("hermes").id == "hermes"


@pytest.mark.e2e
def test_update_info_reports_the_installed_version_and_self_updating(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if not PINNED_HERMES.exists():
        pytest.skip("hermes is not provisioned")
    monkeypatch.setenv("HERMES_CLI_PATH", str(PINNED_HERMES))
    backend = HermesBackend()
    info = backend.update_info(check_latest=True)
    assert info is not None
    assert info.installed == "0.19.0" and info.latest is None
    assert info.self_updating is True and info.update_command == "hermes update"
    assert "hermes update" in (info.note or "")
    assert not hasattr(plugin, "cli_update_info")  # the backend answers, no hook boilerplate


def _sandbox(tmp_path: Path) -> AttemptSandbox:
    root = tmp_path / "sandbox"
    parts = {name: root / name for name in ("home", "work", "private")}
    for folder in parts.values():
        folder.mkdir(parents=True, exist_ok=True)
    real = tmp_path / "real-home"
    real.mkdir(exist_ok=True)
    return AttemptSandbox(
        root, parts["home"], parts["work"], parts["private"], real, {"PATH": "/usr/bin:/bin"}
    )


def test_mcp_spec_on_a_hermes_without_the_mcp_extra_is_a_setup_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    python = shutil.which("python3")
    assert python
    probe = subprocess.run([python, "-c", "import mcp"], capture_output=True, cwd=tmp_path)
    if probe.returncode == 0:
        pytest.skip("the system python has the mcp package")
    cli = tmp_path / "bin" / "hermes"
    cli.parent.mkdir()
    cli.write_text(CONSOLE_SCRIPT.format(python=python))
    monkeypatch.setenv("HERMES_CLI_PATH", str(cli))
    sandbox = _sandbox(tmp_path)
    native = HermesMcpTranslator().translate(
        [McpServerConfig(name="echo", transport="stdio", command="true")], sandbox
    )
    result = HermesBackend().run_attempt(
        AttemptRequest(prompt="hi", model=None, sandbox=sandbox, timeout=10, mcp=native)
    )
    assert result.status is AgentStatus.SETUP_ERROR
    assert "hermes-agent[mcp]" in (result.error or "")


def test_half_a_model_spec_is_reported_without_running_hermes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = tmp_path / "bin" / "hermes"
    cli.parent.mkdir()
    marker = tmp_path / "ran"
    cli.write_text(f"#!/bin/sh\ntouch {marker}\n")
    cli.chmod(0o755)
    monkeypatch.setenv("HERMES_CLI_PATH", str(cli))
    result = HermesBackend().run_attempt(
        AttemptRequest(prompt="hi", model="openrouter/", sandbox=_sandbox(tmp_path), timeout=10)
    )
    assert result.status is AgentStatus.SETUP_ERROR
    assert "<provider>/<model>" in (result.error or "")
    assert not marker.exists()


def test_a_tool_name_of_the_wrong_json_type_is_no_tool_and_no_crash() -> None:
    messages = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c1", "function": {"name": ["read_file"], "arguments": "{}"}},
                {"id": "c2", "function": {"name": "skill_view", "arguments": '{"name": "x"}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "tool", "tool_call_id": "c2", "content": "loaded"},
        {"role": "tool", "tool_name": {"n": 1}, "content": "stray"},
    ]
    turns = transcript(messages)
    assert [turn.tool_name for turn in turns] == [None, "skill_view", None]
    # used to raise TypeError: unhashable type: 'list' (matching it against the file readers)
    assert activated_skills(turns, [_skill("x")]) == ["x"]
