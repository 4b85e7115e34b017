"""Parsing and classification on recorded stream-json, and CLI crashes via stand-in scripts.

The stand-ins are real executables (shell scripts) put in place of ``claude`` through
``CLAUDE_CLI_PATH``: they replay output the pinned CLI produced, or misbehave the way a broken
install would.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from claude_support import attempt

from caliper.plugin.attempt import AgentStatus, PromptRequest
from caliper.system.process import ProcessResult
from caliper_backend_claude import errors
from caliper_backend_claude.events import (
    activated_skills,
    outside_loads,
    parse_stream,
    undeclared_skills,
)

INIT = {"type": "system", "subtype": "init", "model": "claude-opus-5-5[1m]", "apiKeySource": "x"}


def _assistant(msg_id, block, model="claude-opus-5-5", **extra):
    return {
        "type": "assistant",
        "message": {
            "id": msg_id,
            "model": model,
            "role": "assistant",
            "content": [block],
            "usage": {"input_tokens": 100, "output_tokens": 1},
        },
        **extra,
    }


def _tool_result(tool_id, content, is_error=False):
    return {
        "type": "user",
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": tool_id,
                    "content": content,
                    "is_error": is_error,
                }
            ],
        },
    }


def _result(**fields):
    base = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "api_error_status": None,
        "result": "done",
        "usage": {
            "input_tokens": 300,
            "output_tokens": 60,
            "cache_read_input_tokens": 15,
            "cache_creation_input_tokens": 30,
        },
    }
    base.update(fields)
    return base


def _lines(*events):
    return "\n".join(json.dumps(e) for e in events) + "\n"


def _process(stdout="", stderr="", returncode=0, timed_out=False):
    return ProcessResult(("claude",), returncode, stdout, stderr, timed_out, False, 1.0)


def test_two_assistant_lines_of_one_message_become_two_turns_in_order():
    out = _lines(
        INIT,
        _assistant("m1", {"type": "text", "text": "Let me look."}),
        _assistant(
            "m1", {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "a"}}
        ),
        _assistant(
            "m1", {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "ls"}}
        ),
        _tool_result("t2", [{"type": "text", "text": "a.txt"}]),
        _tool_result("t1", "<tool_use_error>no such file</tool_use_error>", is_error=True),
        _assistant("m2", {"type": "text", "text": "Done."}),
        _result(result="Done."),
    )
    stream = parse_stream(out)
    turns = stream.turns
    assert [(t.role, t.tool_name) for t in turns] == [
        ("assistant", None),
        ("tool", "Read"),
        ("tool", "Bash"),
        ("assistant", None),
    ]
    assert turns[1].tool_output.startswith("<tool_use_error>") and turns[1].is_error is True
    assert turns[2].tool_output == "a.txt" and turns[2].is_error is False
    assert stream.final_answer == "Done."


def test_usage_comes_from_the_result_line_not_assistant_lines():
    stream = parse_stream(_lines(INIT, _assistant("m", {"type": "text", "text": "x"}), _result()))
    assert (stream.usage.input_tokens, stream.usage.output_tokens) == (300, 60)
    assert (stream.usage.cache_read_tokens, stream.usage.cache_creation_tokens) == (15, 30)
    no_result = parse_stream(_lines(INIT, _assistant("m", {"type": "text", "text": "x"})))
    assert no_result.usage is None


def test_model_prefers_the_assistant_message_then_init_without_context_suffix():
    synthetic = _assistant("m", {"type": "text", "text": "err"}, model="<synthetic>")
    assert parse_stream(_lines(INIT, synthetic, _result())).model == "claude-opus-5-5"
    real = _assistant("m", {"type": "text", "text": "x"}, model="claude-sonnet-4-5-20250929")
    assert parse_stream(_lines(INIT, real, _result())).model == "claude-sonnet-4-5-20250929"


def _skill_result(tool_id: str, *, error: bool = False, text: str = "Launching skill") -> dict:
    block = {"type": "tool_result", "tool_use_id": tool_id, "content": text, "is_error": error}
    return {"type": "user", "message": {"role": "user", "content": [block]}}


def test_activation_handles_plugin_qualified_names_and_ignores_uninstalled():
    names = ["tools:pdf", "no-such", "hello", "/hello", "other"]
    events = []
    for i, s in enumerate(names):
        call = {"type": "tool_use", "id": f"t{i}", "name": "Skill", "input": {"skill": s}}
        events += [_assistant("m", call), _skill_result(f"t{i}")]
    stream = parse_stream(_lines(INIT, *events, _result()))
    assert activated_skills(stream, ["hello", "pdf", "unused"]) == ["pdf", "hello"]
    assert undeclared_skills(stream, ["hello", "pdf", "unused"]) == ["no-such", "other"]
    assert activated_skills(stream, []) is None


def _skill_call(tool_id: str, skill: str) -> dict:
    block = {"type": "tool_use", "id": tool_id, "name": "Skill", "input": {"skill": skill}}
    return _assistant("m", block)


def test_a_refused_or_unanswered_skill_call_is_not_an_activation():
    """Issue 11 item 1: the tool result decides; an error result loaded nothing."""
    refused = "<tool_use_error>Skill locked cannot be used with Skill tool due to "
    refused += "disable-model-invocation</tool_use_error>"
    events = [
        _skill_call("a", "locked"),
        _skill_result("a", error=True, text=refused),
        _skill_call("b", "gone"),
        _skill_result("b", error=True, text="<tool_use_error>Unknown skill: gone</tool_use_error>"),
        _skill_call("c", "open"),
        _skill_result("c"),
        _skill_call("d", "late"),
    ]
    stream = parse_stream(_lines(INIT, *events, _result()))
    assert activated_skills(stream, ["locked", "open", "late"]) == ["open"]
    assert undeclared_skills(stream, ["locked", "open", "late"]) == []


def test_activation_is_unknown_when_the_stream_is_truncated():
    call = _assistant(
        "m", {"type": "tool_use", "id": "t", "name": "Skill", "input": {"skill": "a"}}
    )
    assert activated_skills(parse_stream(_lines(INIT, call)), ["a"]) is None


def test_garbage_lines_are_counted_not_fatal():
    stream = parse_stream("not json\n[1, 2]\n" + _lines(INIT, _result()))
    assert stream.unparsed_lines == 2 and stream.finished


@pytest.mark.parametrize(
    ("fields", "status"),
    [
        (
            {
                "subtype": "error_max_turns",
                "is_error": True,
                "errors": ["Reached maximum number of turns (3)"],
                "terminal_reason": "max_turns",
            },
            AgentStatus.TASK_FAILED,
        ),
        (
            {
                "is_error": True,
                "api_error_status": 400,
                "terminal_reason": "prompt_too_long",
                "result": "Prompt is too long",
            },
            AgentStatus.TASK_FAILED,
        ),
        ({"is_error": True, "api_error_status": 429}, AgentStatus.INFRA_ERROR),
        ({"is_error": True, "api_error_status": 529}, AgentStatus.INFRA_ERROR),
        ({"is_error": True, "api_error_status": 502}, AgentStatus.INFRA_ERROR),
        ({"is_error": True, "api_error_status": 401}, AgentStatus.SETUP_ERROR),
        ({"is_error": True, "api_error_status": 403}, AgentStatus.SETUP_ERROR),
        (
            {"is_error": True, "api_error_status": None, "result": "Unable to connect"},
            AgentStatus.INFRA_ERROR,
        ),
        (
            {"subtype": "error_during_execution", "is_error": True, "errors": ["boom"]},
            AgentStatus.INFRA_ERROR,
        ),
        ({}, AgentStatus.COMPLETED),
    ],
)
def test_result_fields_decide_the_status(fields, status):
    stream = parse_stream(_lines(INIT, _result(**fields)))
    outcome = errors.classify(_process(stream_out := ""), stream, timeout=10)
    del stream_out
    assert outcome.status is status
    assert (outcome.error is None) == (status is AgentStatus.COMPLETED)


def test_max_turns_reason_is_reported():
    stream = parse_stream(
        _lines(
            INIT,
            _result(
                subtype="error_max_turns",
                is_error=True,
                errors=["Reached maximum number of turns (3)"],
            ),
        )
    )
    assert "maximum number of turns (3)" in errors.classify(_process(), stream, timeout=1).error


def test_is_error_with_subtype_success_is_not_completed():
    stream = parse_stream(
        _lines(INIT, _result(subtype="success", is_error=True, api_error_status=529))
    )
    assert (
        errors.classify(_process(returncode=1), stream, timeout=1).status is AgentStatus.INFRA_ERROR
    )


def _stand_in(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "claude"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return script


@pytest.fixture
def stand_in(tmp_path, clean_env):
    def make(body: str):
        clean_env.setenv("CLAUDE_CLI_PATH", str(_stand_in(tmp_path, body)))
        from caliper_backend_claude.backend import ClaudeCodeBackend

        return ClaudeCodeBackend()

    return make


def test_a_crash_is_an_infra_error_with_the_stderr_tail(stand_in, sandbox):
    backend = stand_in(
        'echo "starting" >&2\necho "Segmentation fault (core dumped)" >&2\nexit 139\n'
    )
    result = backend.run_attempt(attempt(sandbox, "hi"))
    assert result.status is AgentStatus.INFRA_ERROR
    assert "Segmentation fault" in result.error and "139" in result.error
    assert result.activated is None


def test_garbage_output_is_an_infra_error_showing_it(stand_in, sandbox):
    backend = stand_in('echo "<html>proxy error</html>"\nexit 0\n')
    result = backend.run_attempt(attempt(sandbox, "hi"))
    assert result.status is AgentStatus.INFRA_ERROR
    assert "proxy error" in result.error


def test_a_recorded_max_turns_run_is_a_task_failure(stand_in, sandbox, tmp_path):
    recording = tmp_path / "max_turns.jsonl"
    recording.write_text(
        _lines(
            INIT,
            _assistant(
                "m", {"type": "tool_use", "id": "t", "name": "Bash", "input": {"command": "ls"}}
            ),
            _tool_result("t", "a.txt"),
            _result(
                subtype="error_max_turns",
                is_error=True,
                terminal_reason="max_turns",
                errors=["Reached maximum number of turns (1)"],
                result=None,
            ),
        )
    )
    backend = stand_in(f'cat > /dev/null\ncat "{recording}"\nexit 1\n')
    result = backend.run_attempt(attempt(sandbox, "hi"))
    assert result.status is AgentStatus.TASK_FAILED
    assert "maximum number of turns" in result.error
    assert result.transcript[0].tool_output == "a.txt"


def test_argv_env_and_stdin_of_an_attempt(stand_in, sandbox, tmp_path):
    dump = tmp_path / "dump"
    backend = stand_in(
        f'printf "%s\\n" "$@" > "{dump}.argv"\nenv > "{dump}.env"\ncat > "{dump}.stdin"\n'
        'echo \'{"type":"result","subtype":"success","is_error":false,"result":"ok"}\'\n'
    )
    result = backend.run_attempt(attempt(sandbox, "the 'prompt'\n", model="sonnet"))
    assert result.status is AgentStatus.COMPLETED
    argv = (tmp_path / "dump.argv").read_text().splitlines()
    assert argv[:4] == ["-p", "--output-format", "stream-json", "--verbose"]
    assert "--dangerously-skip-permissions" in argv and "--strict-mcp-config" in argv
    assert argv[-2:] == ["--model", "sonnet"]
    assert "the 'prompt'" not in " ".join(argv)
    assert (tmp_path / "dump.stdin").read_text() == "the 'prompt'\n"
    env = dict(
        line.split("=", 1)
        for line in (tmp_path / "dump.env").read_text().splitlines()
        if "=" in line
    )
    assert env["HOME"] == str(sandbox.home)
    for switch in (
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_TELEMETRY",
        "DISABLE_AUTOUPDATER",
        "DISABLE_ERROR_REPORTING",
        "CLAUDE_CODE_DISABLE_BUNDLED_SKILLS",
    ):
        assert env[switch] == "1"
    assert env["CLAUDE_CODE_MAX_RETRIES"] == "2"  # small default when the user sets none
    assert "CLAUDE_CONFIG_DIR" not in env
    if os.geteuid() == 0:
        assert env["IS_SANDBOX"] == "1"


def test_judge_argv_has_no_tools(stand_in, sandbox, tmp_path):
    dump = tmp_path / "argv"
    backend = stand_in(
        f'printf "%s\\n" "$@" > "{dump}"\ncat > /dev/null\n'
        'echo \'{"type":"result","subtype":"success","is_error":false,"result":"PASS"}\'\n'
    )
    result = backend.run_prompt(PromptRequest(prompt="q", model=None, sandbox=sandbox, timeout=10))
    assert result.status is AgentStatus.COMPLETED and result.text == "PASS"
    argv = dump.read_text().split("\n")
    assert argv[argv.index("--tools") + 1] == ""
    assert "--dangerously-skip-permissions" not in argv


def test_missing_cli_is_a_setup_error_with_the_install_hint(clean_env, sandbox, tmp_path):
    clean_env.setenv("CLAUDE_CLI_PATH", str(tmp_path / "nowhere" / "claude"))
    from caliper_backend_claude.backend import ClaudeCodeBackend

    result = ClaudeCodeBackend().run_attempt(attempt(sandbox, "hi"))
    assert result.status is AgentStatus.SETUP_ERROR
    assert "npm install -g @anthropic-ai/claude-code" in result.error


def test_outside_loads_split_user_skills_from_the_clis_built_in_ones():
    """With the user's setup loaded: a load of a skill the init line lists that neither the
    spec nor the user brought is built-in; a user skill (or anything unlisted) is undeclared;
    declared skills are neither; refused calls are nothing."""
    init = {**INIT, "skills": ["mine", "personal", "dataviz", "plugin-authoring"]}
    events = [
        _skill_call("a", "mine"),
        _skill_result("a"),
        _skill_call("b", "personal"),
        _skill_result("b"),
        _skill_call("c", "dataviz"),
        _skill_result("c"),
        _skill_call("d", "cc-plugin-plugin-authoring:plugin-authoring"),
        _skill_result("d"),
        _skill_call("e", "mystery"),
        _skill_result("e"),
        _skill_call("f", "dataviz"),
        _skill_result("f"),
        _skill_call("g", "debug"),
        _skill_result(
            "g", error=True, text="<tool_use_error>Unknown skill: debug</tool_use_error>"
        ),
    ]
    stream = parse_stream(_lines(init, *events, _result()))
    undeclared, built_in = outside_loads(stream, ["mine"], ["personal"])
    assert undeclared == ["personal", "mystery"]
    assert built_in == ["dataviz", "plugin-authoring"]  # a plugin-qualified call counts bare
    assert outside_loads(parse_stream(_lines(init, *events)), ["mine"], []) is None  # no result


@pytest.mark.parametrize(
    ("event", "said"),
    [
        (_result(subtype=["success"]), "'subtype' is a list ([\"success\"]), not a string"),
        (_result(terminal_reason={"why": 1}), "'terminal_reason' is an object"),
        (_result(is_error=True, api_error_status=[429]), "'api_error_status' is a list"),
        ({**INIT, "mcp_servers": [{"name": "w", "status": ["failed"]}]}, "'mcp_servers'"),
        ({**INIT, "skills": [["a"]]}, "'skills'"),
    ],
)
def test_a_field_of_the_wrong_json_type_says_what_the_cli_sent(event, said):
    events = [event, _result()] if event.get("type") == "system" else [INIT, event]
    stream = parse_stream(_lines(*events))
    outcome = errors.classify(_process(), stream, timeout=10)
    assert outcome.status is AgentStatus.INFRA_ERROR
    assert "Claude Code sent output caliper could not read" in outcome.error
    assert said in outcome.error, outcome.error


def test_an_event_that_cannot_be_read_is_named_with_its_line(monkeypatch):
    from caliper_backend_claude import events as stream_module

    def unreadable(self, event):
        raise TypeError("unhashable type: 'list'")

    monkeypatch.setattr(stream_module._Folder, "_assistant", unreadable)
    event = _assistant("m", {"type": "text", "text": "hi"})
    stream = parse_stream(_lines(INIT, event, _result()))
    outcome = errors.classify(_process(), stream, timeout=10)
    assert outcome.status is AgentStatus.INFRA_ERROR
    assert "line 2 could not be read (TypeError" in outcome.error
    assert '"type": "assistant"' in outcome.error  # what the CLI sent


def test_a_wrong_type_through_the_real_backend_is_not_a_crash(stand_in, sandbox):
    lines = _lines(INIT, _result(subtype=["success"], is_error=False))
    backend = stand_in(f"cat <<'EOF'\n{lines}EOF\n")
    result = backend.run_attempt(attempt(sandbox, "hi"))
    assert result.status is AgentStatus.INFRA_ERROR
    assert "TypeError" not in (result.error or "")
    assert "'subtype' is a list" in result.error


def test_the_result_lines_total_cost_usd_is_the_attempts_reported_cost():
    stream = parse_stream(_lines(INIT, _result(total_cost_usd=0.0123)))
    assert stream.usage is not None and stream.usage.cost_usd == 0.0123
    assert stream.usage.output_tokens == 60


def test_no_or_malformed_total_cost_usd_leaves_the_cost_unknown():
    for fields in ({}, {"total_cost_usd": "0.1"}, {"total_cost_usd": True}):
        stream = parse_stream(_lines(INIT, _result(**fields)))
        assert stream.usage is not None and stream.usage.cost_usd is None
