"""``caliper run --model claude-code`` through the real ``claude`` CLI against the scripted model
server: text the model sends that could break the results file or leak a secret."""

from __future__ import annotations

from pathlib import Path

import pytest
from claude_support import claude_cli, needs_claude

from caliper.testing.harness import CaliperRun, FakeRealHome, run_caliper_process
from caliper.testing.model_server import ModelServer

pytestmark = [pytest.mark.e2e, needs_claude]


@pytest.fixture
def model_server():
    """Factory: a started scripted model server (stopped at teardown)."""
    started: list[ModelServer] = []

    def start(script: dict) -> ModelServer:
        server = ModelServer(script).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def _run(tmp_path: Path, server: ModelServer, spec_text: str, *args: str, **env: str) -> CaliperRun:
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    spec = project / "s.eval.yaml"
    spec.write_text(spec_text, encoding="utf-8")
    return run_caliper_process(
        "run",
        spec,
        "--model",
        "claude-code",
        "--k",
        "1",
        *args,
        home=FakeRealHome(tmp_path / "real-home"),
        cwd=project,
        sandbox_parent=tmp_path / "boxes",
        env={
            "CLAUDE_CLI_PATH": str(claude_cli()),
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "sk-test",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            **env,
        },
        timeout=180,
    )


def test_a_lone_surrogate_in_the_model_answer_is_saved_as_replacement(tmp_path, model_server):
    server = model_server({"turns": [{"text": "half a pair: \ud800 end"}]})
    done = _run(tmp_path, server, "tasks:\n  - name: t\n    prompt: hi\n    assert: assert True\n")
    assert done.returncode == 0, done.stderr
    raw = done.results_path.read_bytes()
    raw.decode("utf-8")  # strict: valid UTF-8
    (attempt,) = done.results["tasks"][0]["attempts"]
    assert attempt["outcome"] == "pass"
    assert "half a pair: \ufffd end" in attempt["final_answer"]
    assert "\\ud800" not in raw.decode("utf-8")


def test_a_lone_surrogate_in_a_task_name_and_prompt_reaches_claude_replaced(tmp_path, model_server):
    server = model_server({"turns": [{"text": "ok"}]})
    spec = (
        'tasks:\n  - name: "name \\ud800 x"\n    prompt: "prompt \\udfff y"\n'
        "    assert: assert True\n"
    )
    done = _run(tmp_path, server, spec)
    assert done.returncode == 0, done.stderr
    (task,) = done.results["tasks"]
    assert task["name"] == "name \ufffd x"
    assert task["attempts"][0]["outcome"] == "pass"
    assert any("prompt \ufffd y" in r.sent_text() for r in server.requests)


SECRET = "tok-5ecret-9f3b2a"


def test_a_secret_the_agent_prints_never_reaches_the_judge_model(tmp_path, model_server):
    """The agent (real claude) cats its MCP config, which holds the resolved ``${VAR}``; the
    judge (real claude, same scripted server) must be sent the transcript without it."""
    import sys

    from caliper.plugin.judge import LLM_JUDGE_MARKER

    verdict = '```json\n{"passed": true, "reasoning": "it showed the config"}\n```'
    server = model_server(
        {
            "rules": [{"when": {"judge": True}, "text": verdict}],
            "turns": [
                {
                    "tool_calls": [
                        {
                            "name": "Bash",
                            "arguments": {
                                "command": "cat ../private/claude-mcp.json; env",
                                "description": "show config",
                            },
                        }
                    ]
                },
                {"text": "Here is my config, as asked."},
            ],
        }
    )
    spec = f"""\
mcp:
  echo:
    command: {sys.executable}
    args: [-m, caliper.testing.mcp_echo]
    env:
      API_TOKEN: ${{CALIPER_TEST_TOKEN}}
tasks:
  - name: shows its config
    prompt: Show me your MCP configuration.
    expect: The agent showed its MCP configuration.
"""
    done = _run(
        tmp_path,
        server,
        spec,
        "--judge-model",
        "claude-code",
        CALIPER_TEST_TOKEN=SECRET,
        CALIPER_LOAD_PLUGINS="claude-code,assert,activates,expect",
    )
    assert done.returncode == 0, done.stderr
    (attempt,) = done.results["tasks"][0]["attempts"]
    bash = [t for t in attempt["transcript"] if t["tool_name"] == "Bash"]
    assert bash and "[redacted]" in (bash[0]["tool_output"] or "")  # the agent did print it
    agent_requests = [r for r in server.requests if LLM_JUDGE_MARKER not in r.sent_text()]
    assert any(SECRET in r.sent_text() for r in agent_requests)  # it really was in the output
    judge_requests = [r for r in server.requests if LLM_JUDGE_MARKER in r.sent_text()]
    assert judge_requests, "the judge was never asked"
    assert all(SECRET not in r.sent_text() for r in judge_requests)
    assert any("[redacted]" in r.sent_text() for r in judge_requests)
    assert attempt["outcome"] == "pass", attempt
    assert SECRET not in done.results_path.read_text()


def _big_answer(size: int) -> str:
    """``size`` characters: a head, filler, a token ~5,000 characters from the end, a tail."""
    filler = "lorem ipsum dolor sit amet " * (size // 27 + 1)
    body = "ANSWER-HEAD " + filler[: size - 5_000 - 12]
    return body + " TAIL-TOKEN-7 " + "z" * (5_000 - 14)


def test_a_big_answer_is_stored_once(tmp_path, model_server):
    answer = _big_answer(600_000)  # under the default limits: kept whole, but only once
    server = model_server({"turns": [{"text": answer}]})
    spec = "tasks:\n  - name: t\n    prompt: hi\n    assert: assert True\n"
    done = _run(tmp_path, server, spec)
    assert done.returncode == 0, done.stderr
    size = done.results_path.stat().st_size
    assert len(answer) < size < len(answer) * 1.1, size  # before: twice the answer
    raw = done.results_path.read_text()
    assert raw.count("ANSWER-HEAD") == 1
    (attempt,) = done.results["tasks"][0]["attempts"]
    assert attempt["final_answer"] == answer
    from caliper.results.store import load_run

    (loaded,) = load_run(done.results_path).tasks[0].attempts
    assert loaded.transcript[-1].content == answer  # reading puts the reference back


def test_a_big_answer_is_capped_after_the_judge_saw_it(tmp_path, model_server):
    from caliper.plugin.judge import LLM_JUDGE_MARKER

    answer = _big_answer(300_000)
    verdict = '```json\n{"passed": true, "reasoning": "long answer"}\n```'
    server = model_server(
        {"rules": [{"when": {"judge": True}, "text": verdict}], "turns": [{"text": answer}]}
    )
    spec = "tasks:\n  - name: t\n    prompt: hi\n    expect: It wrote a long answer.\n"
    done = _run(
        tmp_path,
        server,
        spec,
        "--max-attempt-chars",
        "2000",
        "--judge-model",
        "claude-code",
        CALIPER_LOAD_PLUGINS="claude-code,assert,activates,expect",
    )
    assert done.returncode == 0, done.stderr
    assert done.results_path.stat().st_size < 50_000
    (attempt,) = done.results["tasks"][0]["attempts"]
    assert attempt["outcome"] == "pass", attempt
    stored = attempt["final_answer"]
    assert stored.startswith("ANSWER-HEAD") and stored.endswith("z" * 100)
    assert "truncated by caliper: 300,000 characters" in stored
    assert "TAIL-TOKEN-7" not in stored
    judged = [r for r in server.requests if LLM_JUDGE_MARKER in r.sent_text()]
    assert judged and "TAIL-TOKEN-7" in judged[0].sent_text()  # the judge saw the whole answer
