"""The wire registry: built-ins, path matching, names, and a Gemini-style wire added by glue.

The Gemini-style module (``gemini_style_wire.py`` next to this file) is registered the way a
plugin would, then the real :class:`ModelServer` is driven over HTTP with urllib.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import types
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gemini_style_wire
import pytest

from caliper.testing import wire_anthropic, wire_chat, wire_registry, wire_responses
from caliper.testing.conformance import BackendConformance
from caliper.testing.model_server import ModelServer, api_for
from caliper.testing.wire_protocol import WireProtocol
from caliper.testing.wire_registry import (
    UnknownWireError,
    register_wire,
    wire_for_path,
    wire_named,
    wire_names,
)

GEMINI_PATH = "/v1beta/models/gemini-test-pro:generateContent"
GEMINI_STREAM_PATH = "/v1beta/models/gemini-test-flash:streamGenerateContent?alt=sse"


@pytest.fixture(autouse=True)
def fresh_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test starts from the process's registry without the built-in Gemini wire (these
    tests add a Gemini-style wire the way an outside plugin would), and leaves it as it was."""
    wires = dict(wire_registry._WIRES)
    wires.pop("gemini", None)
    monkeypatch.setattr(wire_registry, "_WIRES", wires)
    yield


def post(url: str, body: dict[str, Any]) -> tuple[int, str, str]:
    """POST JSON; return (status, content type, body text)."""
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, resp.headers.get("content-type", ""), resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("content-type", ""), err.read().decode()


def gemini_body(text: str, history: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A Gemini ``generateContent`` request: one user message, one declared function."""
    return {
        "systemInstruction": {"parts": [{"text": "You are a test agent."}]},
        "contents": [{"role": "user", "parts": [{"text": text}]}, *(history or [])],
        "tools": [{"functionDeclarations": [{"name": "run_shell", "parameters": {}}]}],
    }


# the registry ----------------------------------------------------------------------------
def test_the_three_built_in_wires_are_registered_first() -> None:
    assert wire_names()[:3] == ("anthropic", "responses", "chat")
    assert wire_named("anthropic") is wire_anthropic
    assert wire_named("responses") is wire_responses
    assert wire_named("chat") is wire_chat
    for module in (wire_anthropic, wire_responses, wire_chat):
        assert isinstance(module, WireProtocol)
        assert module.name == module.API  # the old constant still names the wire


@pytest.mark.parametrize(
    ("path", "api"),
    [
        ("/v1/messages?beta=true", "anthropic"),
        ("/v1/messages/", "anthropic"),
        ("/v1/responses", "responses"),
        ("/api/v1/chat/completions", "chat"),
        ("/v1/chat/completions?x=1", "chat"),
        ("/v1/embeddings", None),
        (GEMINI_PATH, None),
    ],
)
def test_paths_find_their_wire(path: str, api: str | None) -> None:
    wire = wire_for_path(path)
    assert (wire.name if wire else None) == api
    assert api_for(path) == api


def test_an_unknown_name_is_an_error_naming_the_registered_wires() -> None:
    with pytest.raises(UnknownWireError) as caught:
        wire_named("gemini")
    message = str(caught.value)
    assert "'gemini'" in message
    assert "anthropic, responses, chat" in message
    assert "register_wire" in message


def test_registering_is_idempotent_and_names_are_unique() -> None:
    assert register_wire(gemini_style_wire) is gemini_style_wire
    register_wire(gemini_style_wire)
    assert wire_names().count("gemini-style") == 1
    assert wire_for_path(GEMINI_STREAM_PATH) is gemini_style_wire
    impostor = types.SimpleNamespace(**{k: getattr(wire_chat, k) for k in dir(wire_chat)})
    with pytest.raises(ValueError, match="already registered as 'chat'"):
        register_wire(impostor)


def test_a_module_missing_part_of_the_protocol_is_refused() -> None:
    half = types.SimpleNamespace(name="half", CALL_ID_PREFIX="h_", matches=lambda path: False)
    with pytest.raises(TypeError, match="lacks parse, model_from, stream_from"):
        register_wire(half)
    assert "half" not in wire_names()


# a Gemini-style wire through the real server ---------------------------------------------
def test_a_gemini_style_wire_is_served_after_a_few_lines_of_glue() -> None:
    register_wire(gemini_style_wire)  # the glue: one call, before the server answers
    script = {
        "turns": [
            {
                "text": "Running it.",
                "tool_calls": [{"name": "run_shell", "arguments": {"command": "ls"}}],
                "usage": {"input": 11, "output": 7, "cache_read": 3},
            },
            {"text": "All listed."},
        ]
    }
    with ModelServer(script) as server:
        status, ctype, text = post(server.url + GEMINI_PATH, gemini_body("List the files."))
        assert status == 200 and ctype.startswith("application/json"), text
        reply = json.loads(text)
        parts = reply["candidates"][0]["content"]["parts"]
        assert parts[0] == {"text": "Running it."}
        assert parts[1] == {"functionCall": {"name": "run_shell", "args": {"command": "ls"}}}
        assert reply["usageMetadata"]["promptTokenCount"] == 14
        assert reply["usageMetadata"]["candidatesTokenCount"] == 7
        assert reply["usageMetadata"]["cachedContentTokenCount"] == 3

        history = [
            {"role": "model", "parts": parts},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "run_shell", "response": {"out": "a"}}}],
            },
        ]
        body = gemini_body("List the files.", history)
        status, ctype, text = post(server.url + GEMINI_STREAM_PATH, body)
        assert status == 200 and ctype.startswith("text/event-stream"), text
        chunks = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
        streamed = "".join(
            p.get("text", "") for c in chunks for p in c["candidates"][0]["content"]["parts"]
        )
        assert streamed == "All listed."
        assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"

        first, second = server.model_requests()
        assert (first.api, first.model, first.outcome) == (
            "gemini-style",
            "gemini-test-pro",
            "answer",
        )
        assert first.conversation.has_tools and not first.conversation.stream
        assert first.tool_calls == ("run_shell",)
        assert (second.api, second.model) == ("gemini-style", "gemini-test-flash")
        assert second.conversation.stream and second.answered_by == "turns[1]"
        assert '"out": "a"' in second.sent_text()
        assert server.model_requests("gemini-style") == [first, second]


def test_a_gemini_style_error_uses_the_wires_error_body() -> None:
    register_wire(gemini_style_wire)
    script = {"turns": [{"error": {"status": 429, "message": "slow down", "retry_after": 2}}]}
    with ModelServer(script) as server:
        status, _, text = post(server.url + GEMINI_PATH, gemini_body("Hello?"))
    assert status == 429
    assert json.loads(text) == {
        "error": {"code": 429, "message": "slow down", "status": "RESOURCE_EXHAUSTED"}
    }


def test_before_registration_the_gemini_path_is_unknown() -> None:
    with ModelServer({"turns": [{"text": "never"}]}) as server:
        status, _, _ = post(server.url + GEMINI_PATH, gemini_body("Hello?"))
        assert status == 404
        assert not server.model_requests()


# the conformance kit's hook ---------------------------------------------------------------
class GeminiStyleSuite(BackendConformance):
    """A suite whose agent speaks the Gemini-style wire (never collected: no tests run)."""

    __test__ = False
    backend_id = "gemini-style"
    wire_api = "gemini-style"
    wire_modules = (gemini_style_wire,)


def test_a_suites_wire_modules_are_registered_and_its_wire_api_found() -> None:
    assert "gemini-style" not in wire_names()
    assert GeminiStyleSuite().wire() is gemini_style_wire
    assert wire_for_path(GEMINI_PATH) is gemini_style_wire


def test_a_suite_with_an_unknown_wire_api_gets_the_registered_names() -> None:
    class Typo(BackendConformance):
        __test__ = False
        wire_api = "gemeni"

    with pytest.raises(UnknownWireError, match=r"'gemeni'.*anthropic, responses, chat"):
        Typo().wire()


def test_the_kit_starts_the_server_the_suite_makes(tmp_path: Path) -> None:
    from caliper.testing.conformance import ConformanceKit
    from caliper.testing.harness import AgentCli, FakeRealHome

    made: list[ModelServer] = []

    class OwnServer(GeminiStyleSuite):
        __test__ = False

        def make_server(self, script: Any) -> ModelServer:
            server = ModelServer(script)
            made.append(server)
            return server

    cli = AgentCli(name="none", path=tmp_path / "none", bin_dir=tmp_path)
    assert "gemini-style" not in wire_names()
    kit = ConformanceKit(OwnServer(), tmp_path, FakeRealHome(tmp_path / "home"), cli)
    try:
        server = kit.server(kit.script([{"text": "hi"}]))
        assert made == [server] and kit.servers == [server]
        status, _, text = post(server.url + GEMINI_PATH, gemini_body("Hello?"))
        assert status == 200, text  # the kit registered the suite's wire modules
    finally:
        kit.close()


def test_the_command_line_speaks_a_wire_module_named_with_wire(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "from the cli"}]}))
    port_file = tmp_path / "port"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "caliper.testing.model_server", "--script", str(script),
         "--port-file", str(port_file), "--wire", "gemini_style_wire"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while not port_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        url = f"http://127.0.0.1:{int(port_file.read_text())}{GEMINI_PATH}"
        status, _, text = post(url, gemini_body("Hello?"))
        assert status == 200, text
        assert json.loads(text)["candidates"][0]["content"]["parts"] == [{"text": "from the cli"}]
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_the_command_line_refuses_an_unusable_wire_module(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "x"}]}))
    proc = subprocess.run(
        [sys.executable, "-m", "caliper.testing.model_server", "--script", str(script),
         "--wire", "json"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: --wire json:") and "lacks name" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_rule_may_name_any_registered_wire_and_nothing_else() -> None:
    register_wire(gemini_style_wire)
    rule = {"when": {"api": "gemini-style"}, "text": "hello"}
    ModelServer({"models": ["m"], "rules": [rule]})  # a plugin's wire is a valid `api`
    with pytest.raises(Exception) as caught:
        ModelServer({"models": ["m"], "rules": [{"when": {"api": "gemni"}, "text": "x"}]})
    assert "'api' must be one of" in str(caught.value)
    assert "gemini-style" in str(caught.value)
