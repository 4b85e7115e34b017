"""The backend against the real pinned ``claude`` and the scripted Anthropic model server."""

from __future__ import annotations

import json

import pytest
from claude_support import attempt, make_skill, needs_claude, use_model

from caliper.plugin.attempt import AgentStatus, PromptRequest
from caliper.testing.model_server import ModelServer

pytestmark = [needs_claude, pytest.mark.e2e]

SKILL_RUN = {
    "turns": [
        {
            "text": "I will load the greeting skill.",
            "tool_calls": [{"name": "Skill", "arguments": {"skill": "hello-skill"}}],
            "usage": {"input": 100, "output": 20, "cache_read": 5, "cache_creation": 10},
        },
        {
            "tool_calls": [
                {
                    "name": "Bash",
                    "arguments": {"command": "echo HELLO > greeting.txt", "description": "greet"},
                }
            ],
            "usage": {"input": 100, "output": 20, "cache_read": 5, "cache_creation": 10},
        },
        {
            "text": "Greeting written.",
            "usage": {"input": 100, "output": 20, "cache_read": 5, "cache_creation": 10},
        },
    ]
}


def test_skill_run_gives_transcript_activation_usage_and_model(backend, sandbox, tmp_path):
    skills = [
        make_skill(tmp_path / "src", "hello-skill", "Greets the user.", "Write HELLO."),
        make_skill(tmp_path / "src", "other-skill", "Does something else.", "Nothing."),
    ]
    with ModelServer(SKILL_RUN) as server:
        use_model(backend_env := pytest.MonkeyPatch(), server.url)
        try:
            result = backend.run_attempt(attempt(sandbox, "Please greet me", skills=skills))
        finally:
            backend_env.undo()
        requests = server.model_requests()

    assert result.status is AgentStatus.COMPLETED, result.error
    assert result.final_answer == "Greeting written."
    assert result.activated == ["hello-skill"]
    assert (sandbox.workdir / "greeting.txt").read_text() == "HELLO\n"
    # one Turn per content block, even though text + tool_use came as two assistant lines
    roles = [(t.role, t.tool_name) for t in result.transcript]
    assert roles == [
        ("assistant", None),
        ("tool", "Skill"),
        ("user", None),
        ("tool", "Bash"),
        ("assistant", None),
    ]
    skill_turn, body_turn, bash_turn = (
        result.transcript[1],
        result.transcript[2],
        result.transcript[3],
    )
    assert skill_turn.tool_input == {"skill": "hello-skill"}
    assert "Launching skill: hello-skill" in skill_turn.tool_output
    assert "Write HELLO." in body_turn.content
    assert bash_turn.tool_input["command"] == "echo HELLO > greeting.txt"
    assert bash_turn.is_error is False
    # usage is the result line's sum over three model calls, not an assistant line's partial count
    assert len(requests) == 3
    assert result.usage.input_tokens == 300
    assert result.usage.output_tokens == 60
    assert result.usage.cache_read_tokens == 15
    assert result.usage.cache_creation_tokens == 30
    assert result.model == requests[0].body["model"]
    assert result.exit_code == 0


def test_activation_is_empty_list_when_skills_installed_but_none_loaded(backend, sandbox, tmp_path):
    skills = [make_skill(tmp_path / "src", "hello-skill", "Greets the user.", "Write HELLO.")]
    with ModelServer({"turns": [{"text": "No skill needed."}]}) as server:
        mp = pytest.MonkeyPatch()
        use_model(mp, server.url)
        try:
            result = backend.run_attempt(attempt(sandbox, "What is 2+2?", skills=skills))
        finally:
            mp.undo()
    assert result.status is AgentStatus.COMPLETED
    assert result.activated == []
    assert result.final_answer == "No skill needed."


def test_activation_is_none_without_installed_skills(backend, sandbox):
    with ModelServer({"turns": [{"text": "Hi."}]}) as server:
        mp = pytest.MonkeyPatch()
        use_model(mp, server.url)
        try:
            result = backend.run_attempt(attempt(sandbox, "Hello"))
        finally:
            mp.undo()
    assert result.status is AgentStatus.COMPLETED
    assert result.activated is None


@pytest.mark.parametrize(
    "prompt",
    [
        "He said \"hi\" and 'bye'; $HOME `uname` \\n $(rm -rf /) --model x",
        "line one\nline two\n\n  indented\ttab\n",
        "-p --help",
        "x" * 100_000 + "\nEND-OF-BIG-PROMPT",
    ],
    ids=["quotes", "newlines", "looks-like-flags", "100kb"],
)
def test_prompt_reaches_the_model_verbatim(backend, sandbox, prompt):
    with ModelServer({"turns": [{"text": "ok"}]}) as server:
        mp = pytest.MonkeyPatch()
        use_model(mp, server.url)
        try:
            result = backend.run_attempt(attempt(sandbox, prompt))
        finally:
            mp.undo()
        first = server.model_requests()[0].body
    assert result.status is AgentStatus.COMPLETED, result.error
    content = first["messages"][0]["content"]
    texts = [content] if isinstance(content, str) else [b.get("text", "") for b in content]
    assert texts[-1] == prompt


def test_model_flag_is_sent_and_reported(backend, sandbox):
    with ModelServer({"turns": [{"text": "ok"}]}) as server:
        mp = pytest.MonkeyPatch()
        use_model(mp, server.url)
        try:
            result = backend.run_attempt(attempt(sandbox, "hi", model="claude-sonnet-4-5"))
        finally:
            mp.undo()
        body = server.model_requests()[0].body
    assert body["model"] == "claude-sonnet-4-5"
    assert result.model == "claude-sonnet-4-5"


def test_run_prompt_answers_without_tools(backend, sandbox):
    with ModelServer({"turns": [{"text": '{"verdict": "pass"}'}]}) as server:
        mp = pytest.MonkeyPatch()
        use_model(mp, server.url)
        try:
            result = backend.run_prompt(
                PromptRequest(
                    prompt="Grade this.\n" * 2000, model=None, sandbox=sandbox, timeout=60
                )
            )
        finally:
            mp.undo()
        body = server.model_requests()[0].body
    assert result.status is AgentStatus.COMPLETED, result.error
    assert result.text == '{"verdict": "pass"}'
    assert not body.get("tools")
    assert result.model == body["model"]
    assert result.usage.output_tokens == 20
    assert "Grade this." in json.dumps(body["messages"])
