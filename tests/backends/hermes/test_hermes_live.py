"""The Hermes backend against the real pinned Hermes and the scripted model server."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from hermes_support import FakeUser, make_skill, run_attempt, script

from caliper.plugin.attempt import AgentStatus, AttemptSandbox, Usage
from caliper.testing.model_server import ModelServer
from caliper_backend_hermes.backend import HermesBackend

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("hermes_cli")]

LONG_DESCRIPTION = "Formats tables for reports. Use whenever a table is asked for. TAIL-MARKER"
SKILL_TURNS = (
    {
        "text": "Loading the skill.",
        "tool_calls": [{"name": "skill_view", "arguments": {"name": "hello-skill"}}],
    },
    {
        "tool_calls": [{"name": "terminal", "arguments": {"command": "echo hi > out.txt"}}],
        "usage": {"input": 300, "output": 10, "cache_read": 200},
    },
    {"text": "HELLO-FROM-SKILL done.", "usage": {"input": 50, "output": 5, "cache_read": 400}},
)


def test_skill_activation_transcript_usage_and_model(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser, tmp_path: Path
) -> None:
    skills = [
        make_skill(tmp_path / "src", "hello-skill", "Greets people. Use when asked to greet."),
        make_skill(tmp_path / "src", "other-skill", LONG_DESCRIPTION),
    ]
    with ModelServer(script(*SKILL_TURNS)) as server:
        fake_user.configure(server)
        result = run_attempt(backend, sandbox, "Please greet me", skills=skills)
        sent = server.all_sent_text()
        bodies = [r.body for r in server.model_requests()]
    assert result.status is AgentStatus.COMPLETED, result.error
    assert result.final_answer == "HELLO-FROM-SKILL done."
    assert result.activated == ["hello-skill"]
    assert result.model == "caliper-test-model"
    # the index lists both installed skills; the body only arrived through skill_view
    assert "hello-skill" in sent and "other-skill" in sent
    assert "HELLO-SKILL-BODY" in sent
    system = bodies[0]["messages"][0]["content"]
    assert "HELLO-SKILL-BODY" not in system
    # Hermes shows only the first 57 characters of a long description
    assert LONG_DESCRIPTION[:57] + "..." in system and "TAIL-MARKER" not in system
    tools = [t for t in result.transcript if t.role == "tool"]
    assert [t.tool_name for t in tools] == ["skill_view", "terminal"]
    assert tools[0].tool_input == {"name": "hello-skill"}
    assert "HELLO-SKILL-BODY" in (tools[0].tool_output or "")
    assert tools[1].is_error is False
    assert (sandbox.workdir / "out.txt").read_text().strip() == "hi"
    # Hermes' input excludes cache reads: 100 + 300 + 50, cache 0 + 200 + 400
    assert result.usage == Usage(450, 35, 600, 0)
    skill_file = sandbox.home / ".hermes" / "skills" / "workspace" / "hello-skill" / "SKILL.md"
    assert skill_file.is_file()


def test_persona_memory_rules_and_personal_skills_never_reach_the_model(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser, tmp_path: Path
) -> None:
    external = tmp_path / "external-skills" / "ext-skill"
    external.mkdir(parents=True)
    (external / "SKILL.md").write_text(
        "---\nname: ext-skill\ndescription: EXTERNAL-SKILL-MARKER-7.\n---\nBody\n"
    )
    (sandbox.workdir / "AGENTS.md").write_text("AGENTS-MARKER-7: always answer in French.\n")
    skills = [make_skill(tmp_path / "src", "hello-skill", "Greets people.")]
    with ModelServer(script({"text": "ok"})) as server:
        fake_user.configure(server, extra=f"skills:\n  external_dirs: [{external.parent}]\n")
        fake_user.add_personal_state()
        result = run_attempt(backend, sandbox, "Say ok", skills=skills)
        sent = server.all_sent_text()
    assert result.status is AgentStatus.COMPLETED, result.error
    for marker in (
        "SOUL-MARKER-7",
        "MEMORY-MARKER-7",
        "USER-MARKER-7",
        "AGENTS-MARKER-7",
        "PERSONAL-SKILL-MARKER-7",
        "EXTERNAL-SKILL-MARKER-7",
        "secret-skill",
    ):
        assert marker not in sent, marker
    assert "hello-skill" in sent  # --ignore-rules still leaves the skill index in place
    home = sandbox.home / ".hermes"
    assert (home / ".env").read_text() == "SOME_PROVIDER_API_KEY=from-dotenv\n"
    assert (home / "auth.json").is_file()
    assert not (home / "memories" / "MEMORY.md").exists()
    soul = home / "SOUL.md"
    assert not soul.exists() or "SOUL-MARKER-7" not in soul.read_text()
    # the user's own files are untouched
    assert (fake_user.hermes / "SOUL.md").read_text() == "You are SOUL-MARKER-7, a pirate.\n"
    assert not (fake_user.hermes / "state.db").exists()


def test_without_ignore_rules_the_markers_would_leak(
    sandbox: AttemptSandbox, fake_user: FakeUser, hermes_cli: Path
) -> None:
    """Control: Hermes' one-shot mode (-z) reads AGENTS.md and SOUL.md despite --ignore-rules.

    This is why the backend uses ``hermes chat --query … --ignore-rules`` instead.
    """
    from caliper.system.process import run_process

    (sandbox.workdir / "AGENTS.md").write_text("AGENTS-MARKER-7: always answer in French.\n")
    home = sandbox.home / ".hermes"
    with ModelServer(script({"text": "ok"})) as server:
        fake_user.configure(server)
        fake_user.write_config(
            (fake_user.hermes / "config.yaml")
            .read_text()
            .replace("allow_lazy_installs: true", "allow_lazy_installs: false")
        )
        home.mkdir(parents=True)
        (home / "config.yaml").write_text((fake_user.hermes / "config.yaml").read_text())
        (home / "SOUL.md").write_text("You are SOUL-MARKER-7, a pirate.\n")
        env = {**sandbox.base_env, "HERMES_HOME": str(home), "HERMES_DISABLE_LAZY_INSTALLS": "1"}
        done = run_process(
            [str(hermes_cli), "-z", "Say ok", "--ignore-rules"],
            env=env,
            cwd=sandbox.workdir,
            timeout=90,
        )
        sent = server.all_sent_text()
    assert done.returncode == 0, done.stderr
    assert "AGENTS-MARKER-7" in sent and "SOUL-MARKER-7" in sent


def test_provider_and_model_from_the_engine_string_reach_the_request(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser
) -> None:
    with ModelServer(script({"text": "ok"})) as server:
        fake_user.configure(server)
        result = run_attempt(backend, sandbox, "Say ok", model="custom/other-model-7")
        models = {r.body["model"] for r in server.model_requests()}
    assert result.status is AgentStatus.COMPLETED, result.error
    assert models == {"other-model-7"}
    assert result.model == "other-model-7"


def test_default_model_comes_from_the_user_config_and_is_recorded(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser
) -> None:
    with ModelServer(script({"text": "ok"})) as server:
        fake_user.configure(server, model="users-default-model")
        result = run_attempt(backend, sandbox, "Say ok")
        models = {r.body["model"] for r in server.model_requests()}
    assert result.status is AgentStatus.COMPLETED, result.error
    assert models == {"users-default-model"}
    assert result.model == "users-default-model"


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (401, AgentStatus.SETUP_ERROR),
        (429, AgentStatus.INFRA_ERROR),
        (500, AgentStatus.INFRA_ERROR),
    ],
)
def test_provider_errors_are_classified_from_hermes_records(
    backend: HermesBackend,
    sandbox: AttemptSandbox,
    fake_user: FakeUser,
    status: int,
    expected: AgentStatus,
) -> None:
    error = {"error": {"status": status, "message": f"Scripted failure {status}"}, "times": -1}
    with ModelServer(script(error)) as server:
        fake_user.configure(server)
        result = run_attempt(backend, sandbox, "Say ok")
        calls = len(server.model_requests())
    assert result.status is expected, result.error
    assert result.final_answer is None  # Hermes printed the error as its "answer"
    assert str(status) in (result.error or "")
    assert calls <= 2  # retries are bounded (api_max_retries), despite the user's 5
    if expected is AgentStatus.SETUP_ERROR:
        assert "hermes model" in (result.error or "")
        assert result.activated is not None
    else:
        assert result.activated is None


def test_an_answer_that_looks_like_an_error_is_still_a_completed_run(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser
) -> None:
    with ModelServer(script({"text": "HTTP 401: Invalid API key"})) as server:
        fake_user.configure(server)
        result = run_attempt(backend, sandbox, "Print an auth error message")
    assert result.status is AgentStatus.COMPLETED, result.error
    assert result.final_answer == "HTTP 401: Invalid API key"


def test_connection_refused_is_an_infra_error(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser
) -> None:
    fake_user.configure(None, base_url="http://127.0.0.1:9/v1")
    result = run_attempt(backend, sandbox, "Say ok")
    assert result.status is AgentStatus.INFRA_ERROR, result.error
    assert "onnection" in (result.error or "")


def test_no_model_configured_is_one_setup_error(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser
) -> None:
    result = run_attempt(backend, sandbox, "Say ok")
    assert result.status is AgentStatus.SETUP_ERROR
    assert "hermes model" in (result.error or "")


def test_lapsed_login_is_one_setup_error(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser
) -> None:
    fake_user.write_config("model:\n  provider: nous\n  default: Hermes-4-70B\n")
    result = run_attempt(backend, sandbox, "Say ok")
    assert result.status is AgentStatus.SETUP_ERROR
    assert "hermes model" in (result.error or "") and "hermes login" in (result.error or "")


def _venv_snapshot(cli: Path) -> dict[str, float]:
    venv = cli.parent.parent
    return {
        str(p.relative_to(venv)): p.stat().st_mtime
        for p in venv.rglob("*")
        if "__pycache__" not in p.parts or p.is_dir()
    }


def test_no_lazy_installs_the_venv_is_unchanged(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser, hermes_cli: Path
) -> None:
    before = _venv_snapshot(hermes_cli)
    with ModelServer(
        script(
            {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo hi"}}]},
            {"text": "ok"},
        )
    ) as server:
        fake_user.configure(server)  # the user's config allows lazy installs
        result = run_attempt(backend, sandbox, "Say ok")
    assert result.status is AgentStatus.COMPLETED, result.error
    config = (sandbox.home / ".hermes" / "config.yaml").read_text()
    assert "allow_lazy_installs: false" in config
    log = (sandbox.home / ".hermes" / "logs" / "agent.log").read_text()
    assert "tool terminal completed" in log  # the run really used a tool
    assert "Lazy-install" not in log
    assert _venv_snapshot(hermes_cli) == before


def test_prompt_larger_than_an_argument_goes_through_stdin(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser
) -> None:
    prompt = "-p starts like an option. " + "x" * 200_000 + " END-OF-PROMPT-7"
    with ModelServer(script({"text": "ok"})) as server:
        fake_user.configure(server, extra="")
        fake_user.write_config(
            (fake_user.hermes / "config.yaml")
            .read_text()
            .replace("context_length: 128000", "context_length: 1000000")
        )
        result = run_attempt(backend, sandbox, prompt)
        users = [u for r in server.model_requests() for u in r.conversation.user_texts]
    assert result.status is AgentStatus.COMPLETED, result.error
    assert any(u.startswith("-p starts") and u.endswith("END-OF-PROMPT-7") for u in users)


def test_timeout_kills_hermes(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser
) -> None:
    with ModelServer(script({"text": "late", "delay": 30})) as server:
        fake_user.configure(server)
        result = run_attempt(backend, sandbox, "Say ok", timeout=8)
    assert result.status is AgentStatus.TIMEOUT
    assert result.activated is None
    assert (result.duration_seconds or 0) < 20


def test_mcp_stdio_server_replaces_personal_ones_and_keeps_secrets_out_of_config(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser, tmp_path: Path
) -> None:
    from caliper.plugin.attempt import McpServerConfig
    from caliper_backend_hermes.mcp import HermesMcpTranslator

    log = tmp_path / "mcp-echo.jsonl"
    servers = [
        McpServerConfig(
            name="echo",
            transport="stdio",
            command=sys.executable,
            args=("-m", "caliper.testing.mcp_echo"),
            env={"MCP_ECHO_LOG": str(log)},
        )
    ]
    native = HermesMcpTranslator().translate(servers, sandbox)
    turns = (
        {"tool_calls": [{"name": "mcp__echo__echo", "arguments": {"text": "ping-7"}}]},
        {"text": "echoed"},
    )
    with ModelServer(script(*turns)) as server:
        fake_user.configure(
            server, extra=("mcp_servers:\n  personal:\n    command: personal-mcp-server-7\n")
        )
        result = run_attempt(backend, sandbox, "Echo ping", mcp=native)
        tools_offered = server.model_requests()[0].conversation.tool_names
    assert result.status is AgentStatus.COMPLETED, result.error
    assert "mcp__echo__echo" in tools_offered
    assert not any("personal" in name for name in tools_offered)
    call = next(t for t in result.transcript if t.tool_name == "mcp__echo__echo")
    assert "echo: ping-7" in (call.tool_output or "")
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert any(c.get("method") == "tools/call" for c in calls)
    config = (sandbox.home / ".hermes" / "config.yaml").read_text()
    assert str(log) not in config and "personal-mcp-server-7" not in config
    assert "${CALIPER_MCP_SECRET_0}" in config


def test_run_prompt_answers_without_tools_or_skills(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser, tmp_path: Path
) -> None:
    from hermes_support import make_skill as _make

    from caliper.plugin.attempt import PromptRequest
    from caliper_backend_hermes.skills import HermesSkillInstaller

    HermesSkillInstaller().install([_make(tmp_path / "s", "leftover-skill", "x")], sandbox)
    answer = {"when": {"user_text_contains": "JUDGE-PROMPT-7"}, "text": "VERDICT: PASS"}
    with ModelServer({"rules": [answer]}) as server:
        fake_user.configure(server)
        prompt = "JUDGE-PROMPT-7 " + "transcript line\n" * 20_000
        result = backend.run_prompt(
            PromptRequest(prompt=prompt, model=None, sandbox=sandbox, timeout=90)
        )
        requests = server.model_requests()
    assert result.status is AgentStatus.COMPLETED, result.error
    assert result.text == "VERDICT: PASS"
    assert result.model == "caliper-test-model"
    main = [r for r in requests if "JUDGE-PROMPT-7" in "\n".join(r.conversation.user_texts)]
    assert main and all(not r.conversation.tool_names for r in main)
    assert "leftover-skill" not in server.all_sent_text()


def test_run_prompt_reports_auth_refusal(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser
) -> None:
    from caliper.plugin.attempt import PromptRequest

    with ModelServer(
        {"turns": [{"error": {"status": 401, "message": "bad key"}, "times": -1}], "rules": []}
    ) as server:
        fake_user.configure(server)
        result = backend.run_prompt(
            PromptRequest(prompt="Judge this", model=None, sandbox=sandbox, timeout=90)
        )
    assert result.status is AgentStatus.SETUP_ERROR
    assert result.text is None


def test_clarify_questions_do_not_wait_for_a_human(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser
) -> None:
    question = {"question": "Which colour?", "choices": ["red", "blue"]}
    turns = ({"tool_calls": [{"name": "clarify", "arguments": question}]}, {"text": "blue"})
    with ModelServer(script(*turns)) as server:
        fake_user.configure(server)
        result = run_attempt(backend, sandbox, "Pick a colour", timeout=40)
    assert result.status is AgentStatus.COMPLETED, result.error
    assert (result.duration_seconds or 0) < 30
    asked = next(t for t in result.transcript if t.tool_name == "clarify")
    assert "best judgement" in (asked.tool_output or "")


class _Recorder(BaseHTTPRequestHandler):
    """Records what a remote MCP client sends (and answers nothing useful)."""

    seen: ClassVar[list[tuple[str, str, str]]] = []

    def _record(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.seen.append((self.command, self.path, self.headers.get("Authorization", "")))
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_DELETE = _record

    def log_message(self, *args: object) -> None:
        """Quiet."""


def test_remote_mcp_server_gets_the_resolved_header(
    backend: HermesBackend, sandbox: AttemptSandbox, fake_user: FakeUser
) -> None:
    from caliper.plugin.attempt import McpServerConfig
    from caliper_backend_hermes.mcp import HermesMcpTranslator

    _Recorder.seen = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}/mcp"
        servers = [
            McpServerConfig(
                name="remote",
                transport="http",
                url=url,
                headers={"Authorization": "Bearer remote-secret-7"},
            )
        ]
        native = HermesMcpTranslator().translate(servers, sandbox)
        with ModelServer(script({"text": "ok"})) as server:
            fake_user.configure(server)
            result = run_attempt(backend, sandbox, "Say ok", mcp=native)
    finally:
        httpd.shutdown()
        httpd.server_close()
    # The recorder is no MCP server (it answers 404), so Hermes cannot use it: a setup
    # error naming it, with the resolved URL and header kept out of the message.
    assert result.status is AgentStatus.SETUP_ERROR, result.error
    assert "'remote'" in (result.error or "")
    assert "remote-secret-7" not in (result.error or "") and url not in (result.error or "")
    assert any(auth == "Bearer remote-secret-7" for _, _, auth in _Recorder.seen), _Recorder.seen
    assert all(path.startswith("/mcp") for _, path, _ in _Recorder.seen)
    config = (sandbox.home / ".hermes" / "config.yaml").read_text()
    assert "remote-secret-7" not in config and url not in config
