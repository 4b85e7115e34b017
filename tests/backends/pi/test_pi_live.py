"""The pi backend driving the real pinned pi against the scripted model server.

Run inside a loopback-only network namespace (see conftest). Every test starts its own
scripted server, a fake user with a pi setup, and a real attempt sandbox.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from pi_support import MODEL, PI_UNDER_TEST, USER_MARKER, install, request

from caliper.errors import SetupError
from caliper.plugin.attempt import AgentStatus, PromptRequest, Usage
from caliper.testing.model_server import ModelServer
from caliper_backend_pi.home import agent_dir

pytestmark = pytest.mark.e2e

SKILL = "{{skill_path:hello-skill}}"
NEIGHBOUR_REFERENCE = "{{skill_dir:hello-skill}}/../other-skill/reference.md"


def _sent(server: ModelServer) -> str:
    return server.all_sent_text()


def test_completed_run_reads_events_transcript_usage_and_activation(
    pi_cli, backend, fake_user, sandbox, neighbourhood
):
    script = {
        "turns": [
            {
                "text": "Loading the greeting skill.",
                "tool_calls": [{"name": "read", "arguments": {"path": SKILL}}],
                "usage": {"input": 100, "output": 10, "cache_read": 40},
            },
            {
                "tool_calls": [{"name": "bash", "arguments": {"command": "echo hi; exit 3"}}],
                "usage": {"input": 200, "output": 20},
            },
            {"text": "HELLO-SKILL says hi to Ada.", "usage": {"input": 300, "output": 30}},
        ]
    }
    with ModelServer(script) as server:
        fake_user.configure(server.openai_base_url)
        skills = install(sandbox, neighbourhood)
        result = backend.run_attempt(request(sandbox, skills=skills))
    assert result.status is AgentStatus.COMPLETED, result.error
    assert result.exit_code == 0
    assert result.final_answer == "HELLO-SKILL says hi to Ada."
    assert result.model == MODEL
    assert result.activated == ["hello-skill"]
    assert result.usage == Usage(600, 60, 40, 0)
    roles = [(t.role, t.tool_name) for t in result.transcript]
    assert roles == [
        ("user", None),
        ("assistant", None),
        ("tool", "read"),
        ("tool", "bash"),
        ("assistant", None),
    ]
    read, shell = result.transcript[2], result.transcript[3]
    assert read.tool_input == {"path": str(skills[0].skill_file)}
    assert "Say HELLO-SKILL." in (read.tool_output or "") and read.is_error is False
    assert shell.is_error is True and "Command exited with code 3" in (shell.tool_output or "")
    # The skill was advertised (name, description, path) but never preloaded.
    first = server.requests[0].sent_text()
    assert str(skills[0].skill_file) in first and "Formats tables" in first
    assert "Say HELLO-SKILL." not in first


PRICE = {"input": 3.0, "output": 15.0, "cacheRead": 0.3, "cacheWrite": 3.75}


@pytest.mark.parametrize("price", [PRICE, None], ids=["priced", "unpriced"])
def test_cost_is_what_pi_prices_from_the_models_price_and_none_without_one(
    pi_cli, backend, fake_user, sandbox, price
):
    """pi prices a custom model's tokens from its ``models.json`` ``cost`` (dollars per
    million); without one it reports 0, which is no cost, not a free attempt."""
    script = {
        "turns": [{"text": "one", "usage": {"input": 1000, "output": 100, "cache_read": 400}}]
    }
    with ModelServer(script) as server:
        fake_user.configure(server.openai_base_url, cost=price)
        result = backend.run_attempt(request(sandbox))
    assert result.status is AgentStatus.COMPLETED, result.error
    usage = result.usage
    assert usage is not None and usage.input_tokens and usage.output_tokens
    if price is None:
        assert usage.cost_usd is None
        return
    expected = (
        usage.input_tokens * 3.0 + usage.output_tokens * 15.0 + (usage.cache_read_tokens or 0) * 0.3
    ) / 1_000_000
    assert usage.cost_usd == pytest.approx(expected, rel=1e-9)


def test_activation_is_exact_per_skill(pi_cli, backend, fake_user, sandbox, neighbourhood):
    skills_root = agent_dir(sandbox) / "skills"
    relative = os.path.relpath(skills_root / "other-skill" / "SKILL.md", sandbox.workdir)
    script = {
        "turns": [
            {"tool_calls": [{"name": "bash", "arguments": {"command": f"ls {skills_root}"}}]},
            {
                "tool_calls": [
                    {
                        "name": "read",
                        "arguments": {
                            "path": "{{skill_dir:hello-skill}}/../other-skill/reference.md"
                        },
                    }
                ]
            },
            {"tool_calls": [{"name": "bash", "arguments": {"command": f"cat '{relative}'"}}]},
            {"text": "done"},
        ]
    }
    with ModelServer(script) as server:
        fake_user.configure(server.openai_base_url)
        skills = install(sandbox, neighbourhood)
        result = backend.run_attempt(request(sandbox, skills=skills))
    assert result.status is AgentStatus.COMPLETED, result.error
    tools = [t for t in result.transcript if t.role == "tool"]
    assert [t.is_error for t in tools] == [False, False, False]
    # Listing the root and reading a neighbour's other file are not activations; printing
    # other-skill's SKILL.md through a path relative to the working directory is.
    assert result.activated == ["other-skill"]


def test_no_skill_read_means_empty_activation(pi_cli, backend, fake_user, sandbox, neighbourhood):
    with ModelServer({"turns": [{"text": "Hi Ada."}]}) as server:
        fake_user.configure(server.openai_base_url)
        skills = install(sandbox, neighbourhood)
        result = backend.run_attempt(request(sandbox, skills=skills))
    assert result.status is AgentStatus.COMPLETED
    assert result.activated == []


@pytest.mark.parametrize("prompt", ["--help me greet Ada", "@notes.txt greet Ada", "x" * 200_000])
def test_prompt_reaches_the_model_verbatim(pi_cli, backend, fake_user, sandbox, prompt):
    """The prompt goes through stdin: no flag or @file parsing, no argv size limit."""
    with ModelServer({"turns": [{"text": "ok"}]}) as server:
        fake_user.configure(server.openai_base_url)
        result = backend.run_attempt(request(sandbox, prompt))
    assert result.status is AgentStatus.COMPLETED, result.error
    assert result.transcript[0].content == prompt
    assert prompt in _sent(server)


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, AgentStatus.SETUP_ERROR),
        (403, AgentStatus.SETUP_ERROR),
        (429, AgentStatus.INFRA_ERROR),
        (500, AgentStatus.INFRA_ERROR),
    ],
)
def test_provider_errors_exit_zero_and_are_classified_from_stop_reason(
    pi_cli, backend, fake_user, sandbox, status, expected
):
    script = {"turns": [{"error": {"status": status, "message": "scripted failure"}, "times": -1}]}
    with ModelServer(script) as server:
        fake_user.configure(server.openai_base_url)
        result = backend.run_attempt(request(sandbox))
    assert result.exit_code == 0  # pi's JSON mode hides the failure in its exit status
    assert result.status is expected
    assert str(status) in (result.error or "")
    if expected is AgentStatus.SETUP_ERROR:
        assert "/login" in result.error and "API key" in result.error
    # Retries stay bounded: no pi-level retry loop, at most two SDK retries.
    assert 1 <= len(server.requests) <= 3


def test_connection_refused_is_infra_error(pi_cli, backend, fake_user, sandbox):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    fake_user.configure(f"http://127.0.0.1:{port}/v1")
    result = backend.run_attempt(request(sandbox))
    assert result.exit_code == 0
    assert result.status is AgentStatus.INFRA_ERROR
    assert "connection" in (result.error or "").lower()


def test_timeout_kills_pi(pi_cli, backend, fake_user, sandbox):
    with ModelServer({"turns": [{"delay": 30, "text": "late"}]}) as server:
        fake_user.configure(server.openai_base_url)
        result = backend.run_attempt(request(sandbox, timeout=3))
    assert result.status is AgentStatus.TIMEOUT
    assert result.exit_code is None
    assert result.duration_seconds is not None and result.duration_seconds < 15


def test_no_default_model_fails_before_running(pi_cli, backend, fake_user, sandbox):
    with ModelServer({"turns": [{"text": "never"}]}) as server:
        fake_user.configure(server.openai_base_url, default=False)
        with pytest.raises(SetupError) as raised:
            backend.run_attempt(request(sandbox, model=None))
    assert server.requests == []
    message = raised.value.render()
    assert "no default model" in message
    assert "--model pi:<provider>/<model>" in message
    assert str(fake_user.agent_dir / "settings.json") in message


def test_default_model_from_user_settings(pi_cli, backend, fake_user, sandbox):
    with ModelServer({"turns": [{"text": "from default"}]}) as server:
        fake_user.configure(server.openai_base_url)
        result = backend.run_attempt(request(sandbox, model=None))
    assert result.status is AgentStatus.COMPLETED, result.error
    assert result.model == MODEL
    assert server.requests[0].body["model"] == "fake-model"


def test_unknown_provider_is_setup_error(pi_cli, backend, fake_user, sandbox):
    with ModelServer({"turns": [{"text": "never"}]}) as server:
        fake_user.configure(server.openai_base_url)
        result = backend.run_attempt(request(sandbox, model="nosuchprovider/model-x"))
    assert result.status is AgentStatus.SETUP_ERROR
    assert result.exit_code == 1
    assert "nosuchprovider" in (result.error or "")
    assert server.requests == []


def test_user_resources_do_not_leak_and_real_home_is_untouched(
    pi_cli, backend, fake_user, sandbox, neighbourhood
):
    with ModelServer({"turns": [{"text": "ok"}]}) as server:
        fake_user.configure(server.openai_base_url, skills=[str(fake_user.home / "more")])
        fake_user.plant_private_resources()
        before = fake_user.snapshot()
        (sandbox.workdir.parent / "AGENTS.md").write_text(f"{USER_MARKER} ancestor\n")
        skills = install(sandbox, neighbourhood)
        result = backend.run_attempt(request(sandbox, skills=skills))
    assert result.status is AgentStatus.COMPLETED, result.error
    sent = _sent(server)
    assert "hello-skill" in sent
    assert USER_MARKER not in sent
    assert "user-private-skill" not in sent and "agents-private" not in sent
    assert fake_user.snapshot() == before
    settings = json.loads((agent_dir(sandbox) / "settings.json").read_text())
    assert settings["retry"]["enabled"] is False
    assert "skills" not in settings
    assert not (agent_dir(sandbox) / "sessions").exists()


def test_planted_user_resources_would_leak_without_isolation(pi_cli, fake_user, tmp_path):
    """Control for the test above: pi run on the user's own agent dir does show them."""
    from caliper.system.process import run_process

    with ModelServer({"turns": [{"text": "ok"}]}) as server:
        fake_user.configure(server.openai_base_url)
        fake_user.plant_private_resources()
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(fake_user.home),
            "PI_OFFLINE": "1",
            "PI_TELEMETRY": "0",
        }
        work = tmp_path / "control-work"
        work.mkdir()
        run_process(
            [str(pi_cli), "--print", "--mode", "json", "--no-session", "--model", MODEL],
            env=env,
            cwd=work,
            timeout=60,
            stdin_text="hi",
        )
    sent = _sent(server)
    for planted in ("skill", "agents skill", "extension", "context", "system"):
        assert f"{USER_MARKER} {planted}" in sent, planted


def test_run_prompt_has_no_tools_and_no_skills(pi_cli, backend, fake_user, sandbox, neighbourhood):
    with ModelServer({"turns": [{"text": "VERDICT: pass"}]}) as server:
        fake_user.configure(server.openai_base_url)
        install(sandbox, neighbourhood)
        answer = backend.run_prompt(
            PromptRequest(prompt="Judge this.", model=MODEL, sandbox=sandbox, timeout=60)
        )
    assert answer.status is AgentStatus.COMPLETED, answer.error
    assert answer.text == "VERDICT: pass"
    assert answer.model == MODEL
    body = server.requests[0].body
    assert not body.get("tools")
    assert "hello-skill" not in server.requests[0].sent_text()


def test_run_prompt_reports_auth_failure(pi_cli, backend, fake_user, sandbox):
    script = {"turns": [{"error": {"status": 401, "message": "bad key"}, "times": -1}]}
    with ModelServer(script) as server:
        fake_user.configure(server.openai_base_url)
        answer = backend.run_prompt(
            PromptRequest(prompt="Judge this.", model=MODEL, sandbox=sandbox, timeout=60)
        )
    assert answer.status is AgentStatus.SETUP_ERROR
    assert answer.text is None and "401" in (answer.error or "")


def test_missing_cli_is_setup_error_with_install_hint(backend, sandbox, monkeypatch, tmp_path):
    """A missing pi is a SETUP_ERROR result, as for every other backend (it used to raise)."""
    monkeypatch.setenv("PI_CLI_PATH", str(tmp_path / "no-such-pi"))
    result = backend.run_attempt(request(sandbox))
    assert result.status is AgentStatus.SETUP_ERROR
    assert "npm install -g @earendil-works/pi-coding-agent" in (result.error or "")
    judged = backend.run_prompt(
        PromptRequest(prompt="Judge this.", model=MODEL, sandbox=sandbox, timeout=60)
    )
    assert judged.status is AgentStatus.SETUP_ERROR
    assert "npm install -g @earendil-works/pi-coding-agent" in (judged.error or "")


pinned_only = pytest.mark.skipif(
    PI_UNDER_TEST is not None, reason="checks the pinned pi's version and retry counts"
)


@pinned_only
def test_cli_version_is_the_pinned_one(pi, backend):
    info = backend.cli_info()
    assert info.found and info.version == pi.version


@pinned_only
def test_cli_version_falls_back_to_isolated_pi_version(pi, backend, tmp_path):
    wrapper = tmp_path / "bin" / "pi"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{Path(os.path.realpath(pi.path))}" "$@"\n')
    wrapper.chmod(0o755)
    assert backend.cli_version(wrapper) == pi.version


def test_provider_without_a_key_is_setup_error(pi_cli, backend, fake_user, sandbox, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_OAUTH_TOKEN", raising=False)
    with ModelServer({"turns": [{"text": "never"}]}) as server:
        fake_user.configure(server.openai_base_url)
        result = backend.run_attempt(request(sandbox, model="anthropic/claude-sonnet-4-5"))
    assert result.status is AgentStatus.SETUP_ERROR, (result.error, result.exit_code)
    assert "API key" in (result.error or "")
