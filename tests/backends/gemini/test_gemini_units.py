"""Offline checks of the gemini backend's parts: the wire, the stream, errors, MCP, login."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import attrs
import pytest

from caliper.plugin import ProcessResult, SetupError, private_files
from caliper.plugin.attempt import AgentStatus, McpServerConfig
from caliper.plugin.mcp import EnvReferences
from caliper.plugin.sandbox import make_sandbox, remove_sandbox
from caliper.testing import wire_gemini
from caliper.testing.harness import processes_mentioning
from caliper.testing.reply import Reply, ReplyCall
from caliper.testing.script import ScriptedError, ScriptedUsage
from caliper.testing.wire_registry import wire_for_path
from caliper_backend_gemini import errors, events, home, login, mcp_check
from caliper_backend_gemini.home import check_no_references
from caliper_backend_gemini.mcp import server_entry

PATH = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"


def test_wire_is_found_by_path_with_the_model_from_the_url() -> None:
    assert wire_for_path(PATH) is wire_gemini
    assert wire_for_path("/v1beta/models/gemini-2.5-flash:generateContent") is wire_gemini
    assert wire_gemini.model_from(PATH, {}) == "gemini-2.5-pro"
    assert wire_gemini.stream_from(PATH, {}) is True
    assert wire_gemini.stream_from("/v1beta/models/m:generateContent", {}) is False


def test_wire_parses_calls_results_and_positions() -> None:
    body = {
        "systemInstruction": {"parts": [{"text": "SYS"}]},
        "contents": [
            {"role": "user", "parts": [{"text": "hello"}]},
            {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "t", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": "c1", "name": "t",
                                                             "response": {"output": "R"}}}]},
        ],
        "tools": [{"functionDeclarations": [{"name": "t"}, {"name": "u"}]}],
    }  # fmt: skip
    conv = wire_gemini.parse(body)
    assert conv.system_texts == ("SYS",)
    assert conv.user_texts == ("hello",)
    assert conv.tool_results == ("R",)
    assert conv.tool_names == ("t", "u")
    assert conv.position == 1


def test_wire_reply_usage_counts_cached_inside_the_prompt() -> None:
    usage = ScriptedUsage(input=100, output=20, cache_read=30, cache_creation=10)
    call = ReplyCall(id="fc_1", name="run_shell_command", arguments='{"command": "ls"}')
    reply = Reply(model="m", text="Hi there", tool_calls=(call,), usage=usage)
    chunks = [json.loads(line[6:]) for line in wire_gemini.reply_sse(reply).decode().split("\n")
              if line.startswith("data: ")]  # fmt: skip
    assert "".join(p["text"] for c in chunks[:-1] for p in c["candidates"][0]["content"]["parts"])
    last = chunks[-1]
    assert last["usageMetadata"]["promptTokenCount"] == 140
    assert last["usageMetadata"]["cachedContentTokenCount"] == 30
    assert last["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] == {"command": "ls"}
    assert wire_gemini.error_body(ScriptedError(status=429))["error"]["status"] == (
        "RESOURCE_EXHAUSTED"
    )


STREAM = "\n".join(
    json.dumps(e)
    for e in [
        {"type": "init", "session_id": "s", "model": "gemini-2.5-pro"},
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "tool_use", "tool_name": "activate_skill", "tool_id": "a",
         "parameters": {"name": "x"}},
        {"type": "tool_result", "tool_id": "a", "status": "error", "error": {"message": "no"}},
        {"type": "tool_use", "tool_name": "activate_skill", "tool_id": "b",
         "parameters": {"name": "y"}},
        {"type": "tool_result", "tool_id": "b", "status": "success", "output": "loaded"},
        {"type": "message", "role": "assistant", "content": "Do", "delta": True},
        {"type": "message", "role": "assistant", "content": "ne.", "delta": True},
        {"type": "result", "status": "success",
         "stats": {"input_tokens": 140, "input": 110, "cached": 30, "output_tokens": 20}},
    ]
)  # fmt: skip


def test_stream_gives_turns_usage_and_successful_loads_only() -> None:
    run = events.parse_events("Warning: colours\n" + STREAM)
    assert run.final_answer == "Done."
    assert run.model == "gemini-2.5-pro"
    assert [c.parameters["name"] for c in run.successful_calls("activate_skill")] == ["y"]
    tools = [t for t in run.turns if t.role == "tool"]
    assert tools[0].is_error is True and tools[0].tool_output == "no"
    assert tools[1].tool_output == "loaded"
    assert run.usage is not None
    assert (run.usage.input_tokens, run.usage.cache_read_tokens) == (110, 30)


def _process(returncode: int, stdout: str = "") -> ProcessResult:
    return ProcessResult(
        argv=("gemini",), returncode=returncode, stdout=stdout, stderr="", timed_out=False,
        interrupted=False, duration_seconds=1.0,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("code", "status"),
    [
        (145, AgentStatus.SETUP_ERROR),
        (41, AgentStatus.SETUP_ERROR),
        (148, AgentStatus.SETUP_ERROR),
        (173, AgentStatus.INFRA_ERROR),
        (244, AgentStatus.INFRA_ERROR),
        (1, AgentStatus.INFRA_ERROR),
    ],
)
def test_exit_code_is_the_http_status_mod_256(code: int, status: AgentStatus) -> None:
    failed = json.dumps({"type": "result", "status": "error", "error": {"message": "x"}})
    run = events.parse_events(failed)
    assert errors.classify(_process(code, failed), run, timeout=60).status is status
    assert errors.http_status(code) == (code + 256 if code >= 144 else None)


def test_secrets_and_dollars_become_references() -> None:
    secret = EnvReferences(empty_as_literal=True)
    stdio = McpServerConfig(name="s", transport="stdio", command="run", args=("$HOME", "plain"),
                            env={"TOKEN": "v1"})  # fmt: skip
    http = McpServerConfig(name="h", transport="http", url="http://x/mcp?k=v2",
                           headers={"Authorization": "Bearer v3"})  # fmt: skip
    entries = [server_entry(stdio, secret), server_entry(http, secret)]
    text = json.dumps(entries)
    assert not any(value in text for value in ("v1", "v2", "v3", "$HOME"))
    assert set(secret.env.values()) == {"$HOME", "v1", "http://x/mcp?k=v2", "Bearer v3"}
    assert entries[0]["args"][1] == "plain" and "httpUrl" in entries[1]
    check_no_references(entries)  # only caliper's references are left
    with pytest.raises(SetupError):
        check_no_references({"x": "a $VAR"})


def test_mcp_list_lines_are_read() -> None:
    out = "Configured MCP servers:\n\n✓ echo: python -m x (stdio) - Connected\n" \
          "✗ down: http://127.0.0.1:9/mcp (http) - Disconnected\n"  # fmt: skip
    states = mcp_check.server_states(out)
    assert states == {"echo": "Connected", "down": "Disconnected"}
    servers = [McpServerConfig(name=n, transport="stdio") for n in ("echo", "down", "gone")]
    assert mcp_check.unusable(servers, states) == ["down", "gone"]


def test_login_needs_a_key_or_a_saved_login(tmp_path: Path) -> None:
    login.check_login(tmp_path, {"GEMINI_API_KEY": "k"})
    with pytest.raises(SetupError) as raised:
        login.check_login(tmp_path, {})
    assert "GEMINI_API_KEY" in raised.value.render()
    folder = tmp_path / ".gemini"
    folder.mkdir()
    (folder / "settings.json").write_text(
        '{"security": {"auth": {"selectedType": "oauth-personal"}}}'
    )
    with pytest.raises(SetupError):
        login.check_login(tmp_path, {})
    (folder / "oauth_creds.json").write_text("{}")
    login.check_login(tmp_path, {})


def test_mcp_check_that_hangs_ends_everything_it_started_and_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gemini mcp list` starts the stdio servers itself: when it hangs, the check ends them
    too (not only the CLI) and removes its throw-away home."""
    marker = f"caliper-mcp-check-sleeper-{tmp_path.name}"
    cli = tmp_path / "gemini"
    server_like = f"{sys.executable} -c 'import time; time.sleep(300)' {marker}"
    cli.write_text(f"#!/bin/sh\n{server_like} &\nsleep 300\n")
    cli.chmod(0o755)
    sandboxes = tmp_path / "sandboxes"
    sandboxes.mkdir()
    monkeypatch.setenv("CALIPER_TMPDIR", str(sandboxes))
    monkeypatch.setattr(mcp_check, "LIST_TIMEOUT", 0.5)
    server = McpServerConfig(name="notes", transport="stdio", command="notes-server")
    with pytest.raises(SetupError) as caught:
        mcp_check.check_servers(cli, [server])
    time.sleep(0.2)  # what a stop ends is gone by now
    assert processes_mentioning(marker) == []
    assert [p.name for p in sandboxes.iterdir() if p.name.startswith("caliper-gemini")] == []
    assert "did not answer" in str(caught.value)


def test_the_users_oauth_login_is_copied_as_a_ledgered_private_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a key the user's OAuth login is copied into the attempt's home: noted in the
    ledger before it is written (a killed run's copy is removed later) and never readable by
    others, not even for a moment."""
    real_home = tmp_path / "real-home"
    (real_home / ".gemini").mkdir(parents=True)
    (real_home / ".gemini" / home.OAUTH_FILE).write_text('{"refresh_token": "r"}')
    monkeypatch.setenv("CALIPER_TMPDIR", str(tmp_path))
    noted: list[tuple[Path, bool]] = []
    monkeypatch.setattr(private_files, "note_private", lambda p: noted.append((p, p.exists())))
    sandbox = attrs.evolve(make_sandbox(spec_dir=tmp_path), real_home=real_home)
    try:
        home.seed(sandbox, environ={"HOME": str(real_home)})
        copy = home.gemini_dir(sandbox) / home.OAUTH_FILE
        assert copy.read_text() == '{"refresh_token": "r"}'
        assert noted == [(copy, False)]
        assert copy.stat().st_mode & 0o777 == 0o600
    finally:
        remove_sandbox(sandbox)
