"""MCP on pi: version-dependent support, the translator, and a real server on both pins."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import attrs
import pytest
from pi_support import request

from caliper.errors import SetupError
from caliper.plugin.attempt import AgentStatus, McpServerConfig, NativeMcpConfig
from caliper.testing.model_server import ModelServer
from caliper_backend_pi import mcp
from caliper_backend_pi.backend import PiBackend
from caliper_backend_pi.home import agent_dir

SECRET = "tok-SECRET-5c1e"


def fake_pi(folder: Path, version_output: str) -> Path:
    """A stand-in ``pi`` whose ``--version`` prints ``version_output`` (no package.json)."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "pi"
    script.write_text(f"#!/bin/sh\necho '{version_output}'\n")
    script.chmod(0o755)
    return script


@pytest.mark.parametrize(
    ("printed", "supported"),
    [("0.74.2", False), ("0.99.4", False), ("1.0.0", True), ("1.6.0", True)],
)
def test_mcp_support_follows_the_version_of_the_pi_found(printed, supported, monkeypatch, tmp_path):
    monkeypatch.setenv("PI_CLI_PATH", str(fake_pi(tmp_path / printed, printed)))
    backend = PiBackend()
    assert backend.supports_mcp() is supported
    if supported:
        assert backend.mcp_refusal() is None
    else:
        refusal = backend.mcp_refusal() or ""
        assert f"pi {printed} (at {tmp_path / printed / 'pi'}) has no MCP support" in refusal
        assert "npm install -g @earendil-works/pi-coding-agent@latest" in refusal
        assert "Node 22.19" in refusal and "claude-code" in refusal


def test_unreadable_version_means_no_mcp_and_says_why(monkeypatch, tmp_path):
    monkeypatch.setenv("PI_CLI_PATH", str(fake_pi(tmp_path, "pi, some build")))
    backend = PiBackend()
    assert backend.supports_mcp() is False
    assert "could not read the version of the pi at" in (backend.mcp_refusal() or "")


def _servers() -> list[McpServerConfig]:
    return [
        McpServerConfig(
            name="local",
            transport="stdio",
            command="/usr/bin/tool",
            args=("--flag", "$HOME"),
            env={"TOKEN": SECRET, "EMPTY": ""},
        ),
        McpServerConfig(
            name="remote",
            transport="http",
            url="https://mcp.example.test/mcp",
            headers={"Authorization": f"Bearer {SECRET}"},
        ),
    ]


def test_translator_keeps_secrets_out_of_the_config(sandbox):
    native = mcp.PiMcpTranslator().translate(_servers(), sandbox)
    servers = native.data["mcpServers"]
    assert servers["local"]["command"] == "/usr/bin/tool"
    assert servers["local"]["args"] == ["--flag", "$HOME"]
    assert servers["local"]["env"]["EMPTY"] == ""
    token_ref = servers["local"]["env"]["TOKEN"]
    header_ref = servers["remote"]["headers"]["Authorization"]
    assert {token_ref, header_ref} == {f"${{{name}}}" for name in native.env}
    assert sorted(native.env.values()) == sorted([SECRET, f"Bearer {SECRET}"])
    assert {s["exposure"] for s in servers.values()} == {"direct"}
    assert SECRET not in json.dumps(native.data)
    assert mcp.unsupported_servers(native) == []


def test_config_lives_in_the_private_folder_linked_from_the_agent_dir(sandbox):
    native = mcp.PiMcpTranslator().translate(_servers(), sandbox)
    link = mcp.write_config(sandbox, native)
    assert link == agent_dir(sandbox) / "mcp.json" and link.is_symlink()
    target = Path(os.path.realpath(link))
    assert target.parent == Path(os.path.realpath(sandbox.private))
    assert oct(target.stat().st_mode & 0o777) == "0o600"
    assert json.loads(link.read_text()) == {"mcpServers": native.data["mcpServers"]}
    mcp.write_config(sandbox, native)  # a second write replaces the link
    assert link.is_symlink()


def test_sse_server_is_a_setup_error_before_pi_runs(sandbox, fake_user, monkeypatch, tmp_path):
    marker = tmp_path / "pi-ran"
    cli = tmp_path / "bin" / "pi"
    cli.parent.mkdir()
    cli.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    cli.chmod(0o755)
    monkeypatch.setenv("PI_CLI_PATH", str(cli))
    fake_user.configure("http://127.0.0.1:9/v1")
    sse = McpServerConfig(name="legacy", transport="sse", url="http://127.0.0.1:9/sse")
    native = mcp.PiMcpTranslator().translate([sse], sandbox)
    assert mcp.unsupported_servers(native) == ["legacy"]
    with pytest.raises(SetupError) as raised:
        PiBackend().run_attempt(attrs.evolve(request(sandbox), mcp=native))
    message = raised.value.render()
    assert "'legacy'" in message and "SSE" in message and "transport: http" in message
    assert not marker.exists()


@pytest.mark.e2e
def test_real_mcp_server_gets_its_secret_env(pi, backend, fake_user, sandbox, tmp_path):
    """pi 1.x calls the server's tool with the secret in the server's env only; 0.7x refuses."""
    if not pi.has_mcp:
        assert backend.supports_mcp() is False
        assert f"pi {pi.version}" in (backend.mcp_refusal() or "")
        return
    assert backend.supports_mcp() is True
    seen = tmp_path / "server-token.txt"
    log = tmp_path / "echo.log"
    launch = (
        f'printf %s "$TOKEN" > {seen}; '
        f"exec {sys.executable} -m caliper.testing.mcp_echo --log {log}"
    )
    server_config = McpServerConfig(
        name="echo",
        transport="stdio",
        command="/bin/sh",
        args=("-c", launch),
        env={"TOKEN": SECRET},
    )
    native: NativeMcpConfig = mcp.PiMcpTranslator().translate([server_config], sandbox)
    script = {
        "turns": [
            {"tool_calls": [{"name": "mcp__echo__echo", "arguments": {"text": "PING-42"}}]},
            {"text": "Echoed."},
        ]
    }
    with ModelServer(script) as server:
        fake_user.configure(server.openai_base_url)
        result = backend.run_attempt(attrs.evolve(request(sandbox), mcp=native))
    assert result.status is AgentStatus.COMPLETED, result.error
    calls = [t for t in result.transcript if t.tool_name == "mcp__echo__echo"]
    assert calls and "echo: PING-42" in (calls[0].tool_output or ""), result.transcript
    assert seen.read_text() == SECRET
    methods = [json.loads(line).get("method") for line in log.read_text().splitlines()]
    assert "tools/call" in methods
    files = [p for p in sandbox.home.rglob("*") if p.is_file()]
    leaked = [p for p in files if SECRET.encode() in p.read_bytes()]
    assert leaked == [], leaked
