"""Error classification, from the real CLI's structured output (scripted API failures)."""

from __future__ import annotations

import pytest
from claude_support import attempt, needs_claude, use_model

from caliper.plugin.attempt import AgentStatus, PromptRequest
from caliper.testing.model_server import ModelServer

pytestmark = [needs_claude, pytest.mark.e2e]


def _run(backend, sandbox, script, *, key="sk-test", timeout=60.0):
    with ModelServer(script) as server:
        mp = pytest.MonkeyPatch()
        use_model(mp, server.url, key=key)
        try:
            result = backend.run_attempt(attempt(sandbox, "Do the task", timeout=timeout))
        finally:
            mp.undo()
        return result, server.model_requests()


@pytest.mark.parametrize("status", [401, 403])
def test_refused_credentials_are_a_setup_error_saying_how_to_log_in(backend, sandbox, status):
    result, _ = _run(backend, sandbox, {"turns": [{"error": {"status": status}, "times": -1}]})
    assert result.status is AgentStatus.SETUP_ERROR
    assert "claude /login" in result.error
    assert "ANTHROPIC_API_KEY" in result.error


def test_missing_login_is_a_setup_error_and_calls_no_model(backend, sandbox):
    result, requests = _run(backend, sandbox, {"turns": [{"text": "never"}]}, key="")
    assert result.status is AgentStatus.SETUP_ERROR
    assert "claude /login" in result.error
    assert requests == []
    assert result.final_answer is None


@pytest.mark.parametrize("status", [429, 529, 500, 503])
def test_rate_limits_overload_and_server_errors_are_infra_errors(backend, sandbox, status):
    script = {"turns": [{"error": {"status": status, "message": "scripted failure"}, "times": -1}]}
    result, requests = _run(backend, sandbox, script)
    assert result.status is AgentStatus.INFRA_ERROR
    assert str(status) in result.error
    assert len(requests) == 1  # CLAUDE_CODE_MAX_RETRIES=0 in these tests


def test_an_error_after_a_good_turn_keeps_the_transcript(backend, sandbox):
    script = {
        "turns": [
            {"tool_calls": [{"name": "Bash", "arguments": {"command": "true"}}]},
            {"error": {"status": 529}, "times": -1},
        ]
    }
    result, _ = _run(backend, sandbox, script)
    assert result.status is AgentStatus.INFRA_ERROR
    assert [t.tool_name for t in result.transcript] == ["Bash"]


def test_answer_text_never_decides_the_status(backend, sandbox):
    script = {
        "turns": [{"text": "API Error: 401 authentication_error · Not logged in · rate limit"}]
    }
    result, _ = _run(backend, sandbox, script)
    assert result.status is AgentStatus.COMPLETED
    assert result.error is None


def test_timeout_kills_the_run_and_leaves_activation_unknown(backend, sandbox, tmp_path):
    from claude_support import make_skill

    skills = [make_skill(tmp_path / "src", "hello-skill", "Greets.", "Write HELLO.")]
    with ModelServer({"turns": [{"text": "slow", "delay": 30}]}) as server:
        mp = pytest.MonkeyPatch()
        use_model(mp, server.url)
        try:
            result = backend.run_attempt(attempt(sandbox, "hi", skills=skills, timeout=4))
        finally:
            mp.undo()
    assert result.status is AgentStatus.TIMEOUT
    assert "4s" in result.error
    assert result.activated is None
    assert result.exit_code is None


def test_run_prompt_classifies_errors_the_same_way(backend, sandbox):
    with ModelServer({"turns": [{"error": {"status": 401}, "times": -1}]}) as server:
        mp = pytest.MonkeyPatch()
        use_model(mp, server.url)
        try:
            result = backend.run_prompt(
                PromptRequest(prompt="grade", model=None, sandbox=sandbox, timeout=60)
            )
        finally:
            mp.undo()
    assert result.status is AgentStatus.SETUP_ERROR
    assert result.text is None
    assert "claude /login" in result.error


def test_unreachable_api_is_an_infra_error(backend, sandbox):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again before the CLI connects
    mp = pytest.MonkeyPatch()
    use_model(mp, f"http://127.0.0.1:{port}")
    try:
        result = backend.run_attempt(attempt(sandbox, "hi", timeout=60))
    finally:
        mp.undo()
    assert result.status is AgentStatus.INFRA_ERROR
    assert "could not reach the model" in result.error
