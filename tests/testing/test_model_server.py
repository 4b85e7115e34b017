"""The scripted model server, driven with plain urllib over real sockets."""

from __future__ import annotations

import gzip
import http.client
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from caliper.plugin.judge import LLM_JUDGE_MARKER
from caliper.testing.model_server import ModelServer
from caliper.testing.script import ScriptError, load_script

PATHS = {
    "anthropic": "/v1/messages?beta=true",
    "responses": "/v1/responses",
    "chat": "/v1/chat/completions",
}


def post(server: ModelServer, api: str, body: dict[str, Any], **headers: str) -> tuple[int, Any]:
    """POST ``body``; return (status, parsed JSON or list of SSE data objects)."""
    req = urllib.request.Request(
        server.url + PATHS[api],
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json", **headers},
    )
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            raw = resp.read().decode()
            status = resp.status
            ctype = resp.headers.get("content-type", "")
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read().decode())
    if ctype.startswith("text/event-stream"):
        events = []
        for line in raw.splitlines():
            if line.startswith("data: "):
                data = line[6:]
                events.append(data if data == "[DONE]" else json.loads(data))
        return status, events
    return status, json.loads(raw)


def user_body(api: str, text: str, *, stream: bool, history: list | None = None) -> dict:
    """A minimal request with one user message (plus ``history`` items)."""
    history = history or []
    if api == "responses":
        return {
            "model": "m",
            "input": [{"role": "user", "content": text}, *history],
            "stream": stream,
        }
    return {
        "model": "m",
        "messages": [{"role": "user", "content": text}, *history],
        "stream": stream,
    }


TOOL_SCRIPT = {
    "turns": [
        {
            "text": "Calling a tool.",
            "tool_calls": [{"name": "Bash", "arguments": {"command": "ls"}}],
            "usage": {"input": 50, "output": 7, "cache_read": 30, "cache_creation": 5},
        },
        {"text": "All done here."},
    ]
}


def text_and_calls(api: str, stream: bool, payload: Any) -> tuple[str, list[tuple[str, dict]]]:
    """Reassemble the text and tool calls from any of the six reply shapes."""
    text, calls = "", []
    if api == "anthropic" and not stream:
        for block in payload["content"]:
            if block["type"] == "text":
                text += block["text"]
            else:
                calls.append((block["name"], block["input"]))
    elif api == "anthropic":
        partial: dict[int, list] = {}
        for ev in payload:
            if ev["type"] == "content_block_start" and ev["content_block"]["type"] == "tool_use":
                partial[ev["index"]] = [ev["content_block"]["name"], ""]
            elif ev["type"] == "content_block_delta":
                d = ev["delta"]
                if d["type"] == "text_delta":
                    text += d["text"]
                else:
                    partial[ev["index"]][1] += d["partial_json"]
        calls = [(n, json.loads(a)) for n, a in partial.values()]
    elif api == "responses":
        items = payload["output"] if not stream else payload[-1]["response"]["output"]
        if stream:
            text = "".join(e["delta"] for e in payload if e["type"] == "response.output_text.delta")
        for item in items:
            if item["type"] == "message" and not stream:
                text += item["content"][0]["text"]
            elif item["type"] == "function_call":
                calls.append((item["name"], json.loads(item["arguments"])))
    elif not stream:
        msg = payload["choices"][0]["message"]
        text = msg["content"] or ""
        calls = [
            (c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in msg.get("tool_calls") or []
        ]
    else:
        partial = {}
        for chunk in payload[:-1]:
            for choice in chunk["choices"]:
                delta = choice["delta"]
                text += delta.get("content") or ""
                for tc in delta.get("tool_calls") or []:
                    slot = partial.setdefault(tc["index"], ["", ""])
                    slot[0] += tc["function"].get("name") or ""
                    slot[1] += tc["function"].get("arguments") or ""
        calls = [(n, json.loads(a)) for n, a in partial.values()]
    return text, calls


@pytest.mark.parametrize("stream", [True, False], ids=["sse", "json"])
@pytest.mark.parametrize("api", ["anthropic", "responses", "chat"])
def test_each_api_answers_text_and_tool_calls(api: str, stream: bool) -> None:
    with ModelServer(TOOL_SCRIPT) as server:
        status, payload = post(server, api, user_body(api, "hi", stream=stream))
    assert status == 200
    text, calls = text_and_calls(api, stream, payload)
    assert text == "Calling a tool."
    assert calls == [("Bash", {"command": "ls"})]


def test_anthropic_stream_has_the_documented_event_sequence_and_usage() -> None:
    with ModelServer(TOOL_SCRIPT) as server:
        _, events = post(server, "anthropic", user_body("anthropic", "hi", stream=True))
    kinds = [e["type"] for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert kinds.count("content_block_start") == 2 == kinds.count("content_block_stop")
    usage = events[0]["message"]["usage"]
    assert usage == {
        "input_tokens": 50,
        "output_tokens": 1,
        "cache_creation_input_tokens": 5,
        "cache_read_input_tokens": 30,
    }
    assert events[-2]["usage"] == {"output_tokens": 7}
    assert events[-2]["delta"]["stop_reason"] == "tool_use"


def test_responses_usage_counts_cache_inside_input() -> None:
    with ModelServer(TOOL_SCRIPT) as server:
        _, events = post(server, "responses", user_body("responses", "hi", stream=True))
    assert events[0]["type"] == "response.created"
    assert events[-1]["type"] == "response.completed"
    assert {e["type"] for e in events} >= {
        "response.output_item.added",
        "response.output_item.done",
        "response.output_text.delta",
    }
    usage = events[-1]["response"]["usage"]
    assert usage["input_tokens"] == 85
    assert usage["input_tokens_details"] == {"cached_tokens": 30}
    assert usage["output_tokens"] == 7 and usage["total_tokens"] == 92


def test_chat_stream_ends_with_usage_chunk_and_done() -> None:
    with ModelServer(TOOL_SCRIPT) as server:
        _, chunks = post(server, "chat", user_body("chat", "hi", stream=True))
    assert chunks[-1] == "[DONE]"
    assert chunks[-2]["choices"] == []
    assert chunks[-2]["usage"]["prompt_tokens"] == 85
    assert chunks[-2]["usage"]["prompt_tokens_details"] == {"cached_tokens": 30}
    assert chunks[-3]["choices"][0]["finish_reason"] == "tool_calls"


@pytest.mark.parametrize("api", ["anthropic", "responses", "chat"])
def test_turns_advance_with_the_conversation_not_the_request_count(api: str) -> None:
    with ModelServer(TOOL_SCRIPT) as server:
        _, first = post(server, api, user_body(api, "hi", stream=False))
        _, again = post(server, api, user_body(api, "hi", stream=False))  # a client retry
        assert text_and_calls(api, False, again)[0] == "Calling a tool."
        if api == "anthropic":
            block = first["content"][1]
            history = [
                {"role": "assistant", "content": first["content"]},
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": block["id"], "content": "a b"}
                    ],
                },
            ]
        elif api == "responses":
            fc = first["output"][1]
            history = [
                {"role": "assistant", "content": "Calling a tool."},
                {
                    "type": "function_call",
                    "call_id": fc["call_id"],
                    "name": "Bash",
                    "arguments": "{}",
                },
                {"type": "function_call_output", "call_id": fc["call_id"], "output": "a b"},
            ]
        else:
            msg = first["choices"][0]["message"]
            history = [
                msg,
                {"role": "tool", "tool_call_id": msg["tool_calls"][0]["id"], "content": "a b"},
            ]
        _, second = post(server, api, user_body(api, "hi", stream=False, history=history))
        assert text_and_calls(api, False, second)[0] == "All done here."
        later = [*history, {"role": "assistant", "content": "All done here."}]
        _, third = post(server, api, user_body(api, "hi", stream=False, history=later))
        assert text_and_calls(api, False, third)[0] == "Done."  # script exhausted: fallback
        records = server.model_requests()
    assert [r.position for r in records] == [0, 0, 1, 2]
    assert [r.outcome for r in records] == ["answer", "answer", "answer", "fallback"]
    assert records[2].conversation.tool_results == ("a b",)


def test_tool_call_ids_are_unique() -> None:
    script = {"turns": [{"tool_calls": [{"name": "a"}, {"name": "b"}], "times": 5}]}
    ids = []
    with ModelServer(script) as server:
        for _ in range(5):
            _, body = post(server, "chat", user_body("chat", "x", stream=False))
            ids += [c["id"] for c in body["choices"][0]["message"]["tool_calls"]]
    assert len(ids) == len(set(ids)) == 10


@pytest.mark.parametrize(
    ("api", "status", "kind"),
    [
        ("anthropic", 401, "authentication_error"),
        ("anthropic", 429, "rate_limit_error"),
        ("anthropic", 529, "overloaded_error"),
        ("responses", 401, "invalid_request_error"),
        ("chat", 429, "rate_limit_error"),
        ("chat", 500, "server_error"),
    ],
)
def test_scripted_errors_use_each_apis_error_body(api: str, status: int, kind: str) -> None:
    script = {"turns": [{"error": {"status": status, "message": "nope", "retry_after": 0}}]}
    with ModelServer(script) as server:
        got, body = post(server, api, user_body(api, "hi", stream=True))
        assert (got, server.requests[0].outcome) == (status, "error")
        # the error turn is used up: the retry gets the fallback answer
        assert post(server, api, user_body(api, "hi", stream=False))[0] == 200
    err = body["error"]
    assert err["type"] == kind and err["message"] == "nope"


def test_error_times_forever_and_retry_after_header() -> None:
    script = {"turns": [{"error": {"status": 429, "retry_after": 2}, "times": -1}]}
    with ModelServer(script) as server:
        for _ in range(3):
            req = urllib.request.Request(
                server.url + PATHS["chat"],
                data=json.dumps(user_body("chat", "x", stream=False)).encode(),
            )
            with pytest.raises(urllib.error.HTTPError) as info:
                urllib.request.urlopen(req, timeout=5)
            assert info.value.code == 429
            assert info.value.headers["Retry-After"] == "2"


def test_drop_closes_the_connection_without_reply_then_continues() -> None:
    script = {"turns": [{"drop": True}, {"text": "after the drop"}]}
    with ModelServer(script) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        conn.request(
            "POST", "/v1/messages", body=json.dumps(user_body("anthropic", "x", stream=False))
        )
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            conn.getresponse()
        conn.close()
        _, body = post(server, "anthropic", user_body("anthropic", "x", stream=False))
        assert body["content"][0]["text"] == "after the drop"
        assert [r.outcome for r in server.requests] == ["drop", "answer"]


def test_delay_holds_the_reply_and_stop_releases_it() -> None:
    with ModelServer({"turns": [{"text": "slow", "delay": 0.3}]}) as server:
        start = time.monotonic()
        post(server, "chat", user_body("chat", "x", stream=False))
        assert time.monotonic() - start >= 0.3
    server = ModelServer({"turns": [{"text": "slow", "delay": 30}]}).start()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request(
        "POST", "/v1/chat/completions", body=json.dumps(user_body("chat", "x", stream=False))
    )
    server.wait_for_requests(0)
    time.sleep(0.1)
    start = time.monotonic()
    server.stop()
    assert time.monotonic() - start < 5


def test_rules_match_before_turns_and_count_times() -> None:
    script = {
        "rules": [
            {"when": {"judge": True}, "text": '{"verdict": "pass"}'},
            {"when": {"no_tools": True}, "text": "APPROVE", "times": 1},
            {"when": {"tool_result_contains": "secret"}, "text": "saw the secret"},
            {"when": {"user_text_contains": "commit", "has_tool_results": False}, "text": "c0"},
        ],
        "turns": [{"text": "ordered"}],
    }
    tools = [{"type": "function", "function": {"name": "t", "parameters": {}}}]
    with ModelServer(script) as server:

        def ask(text: str, *, with_tools: bool = True, history: list | None = None) -> str:
            body = user_body("chat", text, stream=False, history=history)
            if with_tools:
                body["tools"] = tools
            return post(server, "chat", body)[1]["choices"][0]["message"]["content"]

        assert ask(f"{LLM_JUDGE_MARKER} grade this") == '{"verdict": "pass"}'
        assert ask("approve?", with_tools=False) == "APPROVE"
        assert ask("approve?", with_tools=False) == "ordered"  # rule used up
        assert ask("please commit") == "c0"
        result = [{"role": "tool", "tool_call_id": "x", "content": "the secret is 4"}]
        assert ask("please commit", history=result) == "saw the secret"
        labels = [r.answered_by for r in server.requests]
    assert labels == ["rules[0]", "rules[1]", "turns[0]", "rules[3]", "rules[2]"]


def test_commit_scenario_as_one_rule_with_a_turn_sequence() -> None:
    script = load_script(Path(__file__).with_name("scripts") / "commit.yaml")
    replies = []
    with ModelServer(script) as server:
        history: list = []
        for _ in range(3):
            body = user_body("anthropic", "Please commit my change", stream=False, history=history)
            _, reply = post(server, "anthropic", body)
            replies.append(reply)
            results = [
                {"type": "tool_result", "tool_use_id": b["id"], "content": "ok"}
                for b in reply["content"]
                if b["type"] == "tool_use"
            ]
            history += [
                {"role": "assistant", "content": reply["content"]},
                {"role": "user", "content": results},
            ]
    calls = [
        [(b["name"], b["input"]) for b in r["content"] if b["type"] == "tool_use"] for r in replies
    ]
    assert calls[0] == [("Skill", {"skill": "commit-helper"})]
    assert calls[1] == [("Bash", {"command": "git commit -am 'Update notes'"})]
    assert calls[2] == [] and replies[2]["content"][0]["text"] == "Committed."


def test_placeholders_resolve_from_what_the_agent_advertised() -> None:
    script = {
        "turns": [
            {
                "text": "cwd={{workdir}}",
                "tool_calls": [
                    {"name": "read", "arguments": {"path": "{{skill_path:hello}}"}},
                    {"name": "exec_command", "arguments": {"cmd": "cat {{skill_path:other}}"}},
                    {"name": "x", "arguments": {"p": "{{skill_path:missing}}"}},
                ],
            }
        ]
    }
    system = (
        "<available_skills><location>/h/.pi/agent/skills/hello/SKILL.md</location></available_skills>\n"
        "- `r1` = `/c/skills`\n- other: does things (file: r1/other/SKILL.md)\n"
        "<cwd>/tmp/work</cwd>"
    )
    with ModelServer(script) as server:
        body = {
            "model": "m",
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": "go"}],
        }
        _, reply = post(server, "chat", body)
        record = server.requests[0]
    msg = reply["choices"][0]["message"]
    args = [json.loads(c["function"]["arguments"]) for c in msg["tool_calls"]]
    assert msg["content"] == "cwd=/tmp/work"
    assert args[0] == {"path": "/h/.pi/agent/skills/hello/SKILL.md"}
    assert args[1] == {"cmd": "cat /c/skills/other/SKILL.md"}
    assert args[2] == {"p": "{{skill_path:missing}}"}
    assert record.unresolved == ("{{skill_path:missing}}",)


def test_recording_redacts_secrets_and_flattens_sent_text(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    body = {
        "model": "m",
        "system": [{"type": "text", "text": "SYSTEM-PROMPT"}],
        "messages": [
            {"role": "system", "content": "skills: hello - greets"},
            {"role": "user", "content": [{"type": "text", "text": "USER-TEXT"}]},
        ],
        "tools": [{"name": "Skill", "description": "TOOL-DESCRIPTION", "input_schema": {}}],
    }
    with ModelServer({"turns": [{"text": "ok"}]}, log_path=log) as server:
        post(server, "anthropic", body, **{"x-api-key": "sk-secret-value"})
        post(server, "chat", user_body("chat", "x", stream=False), authorization="Bearer sk-abcdef")
        records = server.requests
        everything = server.all_sent_text()
    assert records[0].headers["x-api-key"] == "sk-s…<redacted>"
    assert records[1].headers["authorization"] == "Bearer sk-a…<redacted>"
    assert "secret-value" not in log.read_text() and "abcdef" not in log.read_text()
    text = records[0].sent_text()
    for part in ("SYSTEM-PROMPT", "skills: hello - greets", "USER-TEXT", "TOOL-DESCRIPTION"):
        assert part in text
    assert "TOOL-DESCRIPTION" not in records[0].sent_text(include_tools=False)
    assert "USER-TEXT" in everything
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(d["api"], d["answered_by"]) for d in lines] == [
        ("anthropic", "turns[0]"),
        ("chat", "turns[0]"),
    ]
    assert lines[0]["body"]["model"] == "m"


def test_probes_models_and_unknown_paths() -> None:
    with ModelServer({"models": ["alpha", "beta"]}) as server:
        head = urllib.request.Request(server.url + "/", method="HEAD")
        assert urllib.request.urlopen(head, timeout=5).status == 200
        models = json.loads(urllib.request.urlopen(server.url + "/v1/models", timeout=5).read())
        assert [m["id"] for m in models["data"]] == ["alpha", "beta"]
        one = json.loads(urllib.request.urlopen(server.url + "/v1/models/beta", timeout=5).read())
        assert one["id"] == "beta"
        for path in ("/v1/nothing", "/v1/models/gamma"):
            with pytest.raises(urllib.error.HTTPError) as info:
                urllib.request.urlopen(server.url + path, timeout=5)
            assert info.value.code == 404
        # chat completions under any base path
        req = urllib.request.Request(
            server.url + "/openai/deployments/x/chat/completions",
            data=json.dumps(user_body("chat", "x", stream=False)).encode(),
        )
        assert json.loads(urllib.request.urlopen(req, timeout=5).read())["model"] == "m"


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ({"turns": [{"txt": "x"}]}, "unknown key(s) txt"),
        ({"turns": [{"error": {"status": 418}}]}, "status 418"),
        ({"turns": [{"error": 500, "text": "x"}]}, "cannot also have text"),
        ({"turns": [{"times": 0}]}, "'times'"),
        ({"rules": [{"when": {"judge": "yes"}}]}, "'judge' must be true or false"),
        ({"rules": [{"turns": [], "when": {}}]}, "non-empty list"),
        ({"turns": [{"tool_calls": [{"arguments": {}}]}]}, "non-empty 'name'"),
    ],
)
def test_bad_scripts_are_reported_with_where_and_what(script: dict, message: str) -> None:
    with pytest.raises(ScriptError) as info:
        ModelServer(script)
    assert message in info.value.message
    assert info.value.message.startswith("model-server script, ")


def test_unreadable_script_file(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match="cannot read model-server script"):
        load_script(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("turns: [unclosed")
    with pytest.raises(ScriptError, match="not valid YAML"):
        load_script(bad)


def test_command_line_serves_writes_port_file_and_log(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "from the cli"}]}))
    port_file, log = tmp_path / "port", tmp_path / "log.jsonl"
    proc = subprocess.Popen(
        [sys.executable, "-m", "caliper.testing.model_server", "--script", str(script),
         "--port-file", str(port_file), "--log", str(log)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 10
        while not port_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        port = int(port_file.read_text())
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/v1/chat/completions",
            data=json.dumps(user_body("chat", "x", stream=False)).encode(),
        )
        reply = json.loads(urllib.request.urlopen(req, timeout=5).read())
        assert reply["choices"][0]["message"]["content"] == "from the cli"
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert "RuntimeWarning" not in err
    assert f"serving http://127.0.0.1:{port}" in out
    assert json.loads(log.read_text().splitlines()[0])["outcome"] == "answer"


def test_command_line_bad_script_is_one_line_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("turns: [{drop: true, error: 500}]")
    proc = subprocess.run(
        [sys.executable, "-m", "caliper.testing.model_server", "--script", str(bad)],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: model-server script")
    assert "Traceback" not in proc.stderr


def test_chunked_and_gzip_request_bodies_are_read() -> None:
    body = json.dumps(user_body("chat", "squeezed", stream=False)).encode()
    with ModelServer({"turns": [{"text": "unsqueezed", "times": 2}]}) as server:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
        conn.request(
            "POST", "/v1/chat/completions", body=gzip.compress(body),
            headers={"Content-Encoding": "gzip", "Content-Type": "application/json"},
        )  # fmt: skip
        assert (
            json.loads(conn.getresponse().read())["choices"][0]["message"]["content"]
            == "unsqueezed"
        )
        conn.request("POST", "/v1/chat/completions", body=iter([body[:10], body[10:]]),
                     encode_chunked=True)  # fmt: skip
        second = conn.getresponse()
        assert second.status == 200 and second.read()
        conn.request("POST", "/v1/chat/completions", body=b"\x28\xb5\x2f\xfd",
                     headers={"Content-Encoding": "zstd"})  # fmt: skip
        reply = conn.getresponse()
        assert reply.status == 400 and "zstd" in json.loads(reply.read())["error"]["message"]
        conn.close()
        assert [r.outcome for r in server.requests] == ["answer", "answer", "other"]
        assert "squeezed" in server.requests[1].sent_text()


def test_a_lone_surrogate_is_sent_as_a_json_escape():
    """Scripts may ask for text no UTF-8 stream can carry raw; it goes out as ``\\ud800``."""
    import json as _json

    from caliper.testing.sse import event

    frame = event("content_block_delta", {"delta": {"text": "half \ud800 pair"}})
    assert b"\\ud800" in frame
    payload = frame.decode("utf-8").split("data: ", 1)[1]
    assert _json.loads(payload)["delta"]["text"] == "half \ud800 pair"
