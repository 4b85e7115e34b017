"""Codex quirks, checked on the backend object against the real pinned CLI.

Each test builds an attempt sandbox by hand, points the user's config (in a fake real home)
at a scripted model server and calls ``run_attempt``/``run_prompt`` directly.
"""

from __future__ import annotations

import json
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from codex_support import KEY_VARIABLE, MODEL, user_config

from caliper.plugin.attempt import (
    AgentStatus,
    AttemptRequest,
    AttemptResult,
    AttemptSandbox,
    InstalledSkill,
    McpServerConfig,
    PromptRequest,
)
from caliper.plugin.sandbox import minimal_env
from caliper.plugin.skills import ResolvedSkill
from caliper.testing.harness import AgentCli, FakeRealHome, processes_mentioning
from caliper.testing.mcp_echo import HttpEchoServer
from caliper.testing.model_server import ModelServer
from caliper.testing.remote_mcp import files_containing, new_secret
from caliper_backend_codex.backend import CodexBackend
from caliper_backend_codex.mcp import CodexMcpTranslator
from caliper_backend_codex.skills import CodexSkillInstaller

pytest_plugins = ["caliper.testing.fixtures"]
pytestmark = pytest.mark.e2e  # every test here drives a real agent CLI


class Codex:
    """One test's world: fake real home, CLI override, a sandbox factory."""

    def __init__(self, tmp: Path, home: FakeRealHome, cli: AgentCli) -> None:
        self.tmp = tmp
        self.home = home
        self.cli = cli
        self.backend = CodexBackend()
        self.count = 0

    def configure(self, server_url: str, extra: str = "") -> None:
        folder = self.home.path / ".codex"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "config.toml").write_text(user_config(server_url, extra=extra))

    def sandbox(self) -> AttemptSandbox:
        self.count += 1
        root = self.tmp / f"attempt-{self.count}"
        home, work, private, tmp = (root / n for n in ("home", "work", "private", "tmp"))
        for folder in (home, work, private, tmp):
            folder.mkdir(parents=True)
        return AttemptSandbox(
            root=root,
            home=home,
            workdir=work,
            private=private,
            real_home=self.home.path,
            base_env=minimal_env(home=home, tmpdir=tmp),
        )

    def skills(self, sandbox: AttemptSandbox, *names: str) -> list[InstalledSkill]:
        resolved = []
        for name in names:
            source = self.tmp / "sources" / name
            source.mkdir(parents=True, exist_ok=True)
            (source / "SKILL.md").write_text(
                f"---\nname: {name}\ndescription: Handles {name} chores.\n---\nBODY-{name}\n"
            )
            resolved.append(ResolvedSkill(name, f"Handles {name} chores.", source))
        return CodexSkillInstaller().install(resolved, sandbox)

    def attempt(
        self, prompt: str = "Do it.", *, timeout: float = 60, **kwargs: Any
    ) -> tuple[AttemptResult, AttemptSandbox]:
        sandbox = kwargs.pop("sandbox", None) or self.sandbox()
        request = AttemptRequest(
            prompt=prompt, model=kwargs.pop("model", MODEL), sandbox=sandbox, timeout=timeout,
            **kwargs,
        )  # fmt: skip
        return self.backend.run_attempt(request), sandbox


@pytest.fixture
def codex(
    tmp_path: Path,
    fake_real_home: FakeRealHome,
    agent_cli: Callable[[str], AgentCli],
    monkeypatch: pytest.MonkeyPatch,
) -> Codex:
    cli = agent_cli("codex")
    monkeypatch.setenv("CODEX_CLI_PATH", str(cli.path))
    for name in ("CODEX_HOME", "OPENAI_API_KEY", "CODEX_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_VARIABLE, "sk-test")
    return Codex(tmp_path, fake_real_home, cli)


def exec_call(cmd: str, **extra: str) -> dict[str, Any]:
    return {"name": "exec_command", "arguments": {"cmd": cmd, **extra}}


def test_isolation_activation_usage_and_model(
    codex: Codex, model_server: Callable[..., ModelServer]
) -> None:
    """Personal skills/MCP never reach the agent; the declared skill is read and reported."""
    real = codex.home.path
    for leak in (real / ".agents/skills/leaky-agents", real / ".codex/skills/leaky-codex"):
        leak.mkdir(parents=True)
        (leak / "SKILL.md").write_text(f"---\nname: {leak.name}\ndescription: Leak.\n---\n")
    (real / ".codex" / "auth.json").write_text('{"OPENAI_API_KEY": null}')
    marker = codex.tmp / "personal-mcp-started"
    server = model_server(
        {
            "turns": [
                {"text": "Listing.", "tool_calls": [exec_call("ls -la {{skill_dir:hello}}/..")]},
                {"tool_calls": [exec_call("cat SKILL.md", workdir="{{skill_dir:hello}}")]},
                {"tool_calls": [exec_call("echo HELLO > greeting.txt")]},
                {"text": "Greeted.", "usage": {"input": 70, "output": 9, "cache_read": 40}},
            ]
        }
    )  # fmt: skip
    personal = f'[mcp_servers.personal]\ncommand = "touch"\nargs = ["{marker}"]\n'
    codex.configure(server.url, extra=personal)
    before = codex.home.snapshot()
    sandbox = codex.sandbox()
    skills = codex.skills(sandbox, "hello", "hello-extra")
    result, sandbox = codex.attempt("Please greet me.", sandbox=sandbox, skills=skills, model=None)

    assert result.status is AgentStatus.COMPLETED, result.error
    # a relative read in another workdir is only visible in the session file
    assert result.activated == ["hello"]
    assert (sandbox.workdir / "greeting.txt").read_text() == "HELLO\n"
    assert result.final_answer == "Greeted."
    assert result.model == MODEL  # from the user's config, as Codex reports it
    assert result.exit_code == 0
    usage = result.usage
    assert usage is not None and usage.cache_read_tokens == 40
    assert usage.input_tokens == 3 * 100 + 70 and usage.output_tokens == 3 * 20 + 9
    first = server.model_requests()[0].sent_text()
    assert "hello-extra" in first and "Handles hello chores." in first
    for absent in ("leaky-agents", "leaky-codex", "skill-creator", "BODY-hello"):
        assert absent not in first, absent
    assert not marker.exists(), "the user's personal MCP server was started"
    codex_home = sandbox.home / ".codex"
    assert (codex_home / "config.toml").stat().st_mode & 0o777 == 0o600
    assert not (codex_home / "auth.json").exists(), "a custom provider needs no OpenAI login"
    assert not (codex_home / "skills" / ".system").exists()
    assert codex.home.changes(before) == []


def test_reading_a_neighbour_or_listing_is_not_activation(
    codex: Codex, model_server: Callable[..., ModelServer]
) -> None:
    server = model_server(
        {
            "turns": [
                {"tool_calls": [exec_call("ls {{skill_dir:foo}} && rg chores {{skill_dir:foo}}")]},
                {"tool_calls": [exec_call("sed -n '1,50p' {{skill_path:foo-extra}}")]},
                {"text": "Done."},
            ]
        }
    )  # fmt: skip
    codex.configure(server.url)
    sandbox = codex.sandbox()
    result, _ = codex.attempt(sandbox=sandbox, skills=codex.skills(sandbox, "foo", "foo-extra"))
    assert result.status is AgentStatus.COMPLETED, result.error
    assert result.activated == ["foo-extra"]
    shell = [t for t in result.transcript if t.role == "tool"]
    assert "BODY-foo-extra" in (shell[1].tool_output or "")


def test_no_skills_means_activation_unknown(
    codex: Codex, model_server: Callable[..., ModelServer]
) -> None:
    server = model_server({"turns": [{"text": "Nothing to load."}]})
    codex.configure(server.url)
    result, _ = codex.attempt()
    assert result.status is AgentStatus.COMPLETED
    assert result.activated is None
    assert server.model_requests()[0].body["model"] == MODEL


@pytest.mark.parametrize(
    ("status", "expected", "words"),
    [
        (401, AgentStatus.SETUP_ERROR, "codex login"),
        (403, AgentStatus.SETUP_ERROR, "403"),
        (500, AgentStatus.INFRA_ERROR, "codex reported"),
        (429, AgentStatus.INFRA_ERROR, "429"),
    ],
)
def test_turn_failed_exits_1_and_is_classified(
    codex: Codex,
    model_server: Callable[..., ModelServer],
    status: int,
    expected: AgentStatus,
    words: str,
) -> None:
    error = {"status": status, "message": "All tests passed. Task complete.", "retry_after": 0}
    server = model_server({"turns": [{"error": error, "times": -1}]})
    codex.configure(server.url)
    result, _ = codex.attempt()
    assert result.exit_code == 1
    assert result.status is expected, result.error
    assert words in (result.error or ""), result.error
    assert result.final_answer is None


def test_missing_provider_key_is_a_setup_error(
    codex: Codex, model_server: Callable[..., ModelServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_VARIABLE)
    server = model_server({"turns": [{"text": "unused"}]})
    codex.configure(server.url)
    result, _ = codex.attempt()
    assert result.status is AgentStatus.SETUP_ERROR
    assert KEY_VARIABLE in (result.error or "") and "codex login" in (result.error or "")
    assert not server.model_requests()


def test_connection_refused_is_bounded_by_the_timeout(codex: Codex) -> None:
    """Codex retries a refused connection forever; the attempt ends at its timeout."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    codex.configure(f"http://127.0.0.1:{port}")
    started = time.monotonic()
    result, sandbox = codex.attempt(timeout=4)
    assert result.status is AgentStatus.TIMEOUT
    assert "4s" in (result.error or "")
    assert time.monotonic() - started < 4 + 10
    assert result.exit_code is None
    assert not processes_mentioning(str(sandbox.root))


def test_invalid_user_config_is_a_setup_error(codex: Codex) -> None:
    folder = codex.home.path / ".codex"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text("model = \n")
    result, _ = codex.attempt()
    assert result.status is AgentStatus.SETUP_ERROR
    assert "not valid TOML" in (result.error or "")
    assert str(folder / "config.toml") in (result.error or "")


def test_codex_home_variable_selects_the_user_config(
    codex: Codex, model_server: Callable[..., ModelServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    server = model_server({"turns": [{"text": "From the other folder."}]})
    elsewhere = codex.tmp / "my-codex-home"
    elsewhere.mkdir()
    (elsewhere / "config.toml").write_text(user_config(server.url))
    monkeypatch.setenv("CODEX_HOME", str(elsewhere))
    result, _ = codex.attempt()
    assert result.status is AgentStatus.COMPLETED, result.error
    assert result.final_answer == "From the other folder."
    assert sorted(p.name for p in elsewhere.iterdir()) == ["config.toml"]


def test_mcp_server_from_the_spec(codex: Codex, model_server: Callable[..., ModelServer]) -> None:
    log = codex.tmp / "mcp.log"
    server = model_server(
        {
            "turns": [
                {"tool_calls": [{"name": "echo", "namespace": "mcp__demo",
                                 "arguments": {"text": "PING-9"}}]},
                {"text": "Echoed."},
            ]
        }
    )  # fmt: skip
    personal = '[mcp_servers.personal]\ncommand = "false"\n'
    codex.configure(server.url, extra=personal)
    sandbox = codex.sandbox()
    seen = codex.tmp / "server-secret.txt"
    launch = (
        f'printf %s "$ECHO_SECRET" > {seen}; '
        f"exec {sys.executable} -m caliper.testing.mcp_echo --log {log}"
    )
    declared = McpServerConfig(
        name="demo",
        transport="stdio",
        command="/bin/sh",
        args=("-c", launch),
        env={"ECHO_SECRET": "s3cret"},
    )
    native = CodexMcpTranslator().translate([declared], sandbox)
    result, sandbox = codex.attempt(sandbox=sandbox, mcp=native)
    assert result.status is AgentStatus.COMPLETED, result.error
    calls = [t for t in result.transcript if t.tool_name == "mcp__demo__echo"]
    assert calls and calls[0].tool_input == {"text": "PING-9"}
    assert "echo: PING-9" in (calls[0].tool_output or "")
    assert any(
        json.loads(line).get("method") == "tools/call" for line in log.read_text().splitlines()
    )
    config_text = (sandbox.home / ".codex" / "config.toml").read_text()
    assert "personal" not in config_text and "s3cret" not in config_text
    assert "s3cret" not in repr(result)
    assert seen.read_text() == "s3cret"  # the server got its env value all the same
    assert files_containing("s3cret", [sandbox.home]) == []


def test_mcp_header_secret_never_lands_in_the_attempt_home(
    codex: Codex, model_server: Callable[..., ModelServer]
) -> None:
    """A remote server's header (``Bearer ${VAR}``, resolved) reaches the server but is written
    nowhere in the attempt home: Codex reads it from its environment (``env_http_headers``)."""
    secret = new_secret()
    with HttpEchoServer(log=codex.tmp / "http-mcp.log") as echo:
        server = model_server(
            {
                "turns": [
                    {"tool_calls": [{"name": "echo", "namespace": "mcp__remote",
                                     "arguments": {"text": "PING-11"}}]},
                    {"text": "Echoed."},
                ]
            }
        )  # fmt: skip
        codex.configure(server.url)
        sandbox = codex.sandbox()
        remote = McpServerConfig(
            name="remote",
            transport="http",
            url=echo.url,
            headers={"Authorization": f"Bearer {secret}"},
        )
        native = CodexMcpTranslator().translate([remote], sandbox)
        result, sandbox = codex.attempt(sandbox=sandbox, mcp=native)
        sent = {r.headers.get("authorization") for r in echo.requests if r.verb == "POST"}
    assert result.status is AgentStatus.COMPLETED, result.error
    calls = [t for t in result.transcript if t.tool_name == "mcp__remote__echo"]
    assert calls and "PING-11" in (calls[0].tool_output or "")
    assert sent == {f"Bearer {secret}"}
    assert files_containing(secret, [sandbox.home, sandbox.workdir]) == []


def test_broken_declared_mcp_server_stops_the_run(
    codex: Codex, model_server: Callable[..., ModelServer]
) -> None:
    server = model_server({"turns": [{"text": "unused"}]})
    codex.configure(server.url)
    sandbox = codex.sandbox()
    broken = McpServerConfig(name="broken", transport="stdio", command="/nonexistent/mcp")
    native = CodexMcpTranslator().translate([broken], sandbox)
    result, _ = codex.attempt(sandbox=sandbox, mcp=native)
    assert result.status is AgentStatus.SETUP_ERROR, result
    assert "broken" in (result.error or "")
    assert not server.model_requests()


def test_judge_prompt(codex: Codex, model_server: Callable[..., ModelServer]) -> None:
    server = model_server({"turns": [{"text": "VERDICT: pass"}]})
    codex.configure(server.url)
    sandbox = codex.sandbox()
    codex.skills(sandbox, "judge-must-not-see")
    big = "Judge this transcript.\n" + "x" * 200_000
    result = codex.backend.run_prompt(
        PromptRequest(prompt=big, model=MODEL, sandbox=sandbox, timeout=60)
    )
    assert result.status is AgentStatus.COMPLETED, result.error
    assert result.text == "VERDICT: pass"
    assert result.model == MODEL
    sent = server.model_requests()[0]
    assert "Judge this transcript." in sent.sent_text()
    assert "judge-must-not-see" not in sent.sent_text()
    assert "read-only" in sent.sent_text()
    assert not (sandbox.home / ".codex" / "sessions").exists()


def test_cli_version_keeps_the_real_home_clean(
    codex: Codex, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(codex.home.path))
    before = codex.home.snapshot()
    info = codex.backend.cli_info()
    assert info.path == codex.cli.path
    assert info.version == "0.171.0"
    assert codex.home.changes(before) == []


def test_missing_cli_is_a_setup_error(codex: Codex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_CLI_PATH", str(codex.tmp / "nowhere" / "codex"))
    result, _ = codex.attempt()
    assert result.status is AgentStatus.SETUP_ERROR
    assert "npm install -g @openai/codex" in (result.error or "")


def test_openai_login_is_copied_when_the_provider_needs_it(
    codex: Codex, model_server: Callable[..., ModelServer]
) -> None:
    """``auth.json`` reaches the attempt (0600) only for providers using the OpenAI login."""
    server = model_server({"turns": [{"text": "Logged in."}]})
    folder = codex.home.path / ".codex"
    folder.mkdir(parents=True)
    (folder / "auth.json").write_text('{"OPENAI_API_KEY": "sk-from-login"}')
    (folder / "config.toml").write_text(
        f'model = "{MODEL}"\nmodel_provider = "gateway"\n\n[model_providers.gateway]\n'
        f'name = "Gateway"\nbase_url = "{server.url}/v1"\nwire_api = "responses"\n'
        "requires_openai_auth = true\n"
    )
    before = codex.home.snapshot()
    result, sandbox = codex.attempt()
    assert result.status is AgentStatus.COMPLETED, result.error
    copied = sandbox.home / ".codex" / "auth.json"
    assert copied.stat().st_mode & 0o777 == 0o600
    assert server.model_requests()[0].headers["authorization"].startswith("Bearer sk-f")
    assert codex.home.changes(before) == []
