"""End-to-end behaviour of the gemini backend beyond the kit, on the real pinned ``gemini``
(issue 32): no ``.env`` above the sandbox reaches the CLI, nested and built-in skills are not
scored, an MCP secret is never on disk, no API key stops the run at
once, and SIGTERM ends gemini and its MCP server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import test_gemini_conformance as conformance

from caliper.testing.conformance import ConformanceKit, ok_run, tool_turns
from caliper.testing.harness import FakeRealHome, caliper_executable, processes_mentioning
from caliper.testing.nested_skills import PARENT, write_nested_skill

pytest_plugins = ["caliper.testing.fixtures"]
pytestmark = pytest.mark.e2e

SECRET = "s3cr3t-GEMINI-5521"


@pytest.fixture
def kit(tmp_path: Path, agent_cli: Any) -> Any:
    suite = conformance.TestGeminiConformance()
    suite.wire()
    made = ConformanceKit(
        suite, tmp_path, FakeRealHome(tmp_path / "real-home"), agent_cli("gemini")
    )
    yield made
    made.close()


def shell(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "run_shell_command", "arguments": {"command": command}}]}


def test_env_files_above_the_sandbox_do_not_reach_gemini(kit: ConformanceKit) -> None:
    """A ``.env`` and a ``.gemini/.env`` above the sandboxes: their variables stay unset."""
    for where in (kit.root / ".env", kit.root / ".gemini" / ".env"):
        where.parent.mkdir(parents=True, exist_ok=True)
        where.write_text("CALIPER_PLANTED=leaked-from-above\n", encoding="utf-8")
    server = kit.server(kit.script([shell('printf "[%s]" "$CALIPER_PLANTED"'), {"text": "ok"}]))
    spec = kit.spec([{"name": "env", "prompt": "Print it.", "assert": "assert True"}])
    attempt = ok_run(kit.run(spec, server))
    outputs = [t.get("tool_output") or "" for t in tool_turns(attempt)]
    assert outputs and "[]" in outputs[0], outputs
    assert "leaked" not in server.all_sent_text()


def test_nested_skill_is_not_scored(kit: ConformanceKit) -> None:
    """A SKILL.md nested in a declared skill: not activated; a load of it is undeclared."""
    entry = write_nested_skill(kit)
    script = kit.script(
        [
            {"tool_calls": [{"name": "activate_skill", "arguments": {"name": PARENT}}]},
            {"tool_calls": [{"name": "activate_skill", "arguments": {"name": "nested-one"}}]},
            {"text": "Done."},
        ]
    )
    server = kit.server(script)
    spec = kit.spec(
        [{"name": "nested", "prompt": "Do it.", "assert": "assert True"}], skills=[entry]
    )
    run = kit.run(spec, server)
    attempt = ok_run(run)
    assert attempt["activated"] == [PARENT], run.describe()
    assert "nested-one" not in (attempt["activated"] or []), run.describe()


def test_refused_skill_load_is_not_an_activation(kit: ConformanceKit) -> None:
    """``activate_skill`` of a name that is not installed fails: nothing is activated."""
    script = kit.script(
        [
            {"tool_calls": [{"name": "activate_skill", "arguments": {"name": "no-such"}}]},
            {"text": "Could not load it."},
        ]
    )
    server = kit.server(script)
    spec = kit.spec(
        [{"name": "refused", "prompt": "Load it.", "activates": ["alpha-target"]}],
        skills=[kit.skill("alpha-target")],
    )
    run = kit.run(spec, server)
    attempt = run.attempts()[0]
    assert attempt["activated"] == [], run.describe()
    assert attempt["undeclared"] in ([], None), run.describe()


def test_built_in_skills_are_switched_off(kit: ConformanceKit) -> None:
    """Gemini CLI's own skills are not offered to the model."""
    server = kit.server(kit.script([{"text": "Nothing."}]))
    spec = kit.spec(
        [{"name": "plain", "prompt": "Hi.", "assert": "assert True"}],
        skills=[kit.skill("alpha-target")],
    )
    ok_run(kit.run(spec, server))
    sent = server.model_requests()[0].sent_text()
    assert "alpha-target" in sent
    assert "skill-creator" not in sent and "antigravity-support" not in sent


def test_stdio_mcp_secret_reaches_the_server_but_no_file(kit: ConformanceKit) -> None:
    """``${VAR}`` in a stdio server's env: the server gets it, no sandbox file holds it."""
    log = kit.root / "mcp.log"
    mcp = {
        "echo": {
            "command": sys.executable,
            "args": ["-m", "caliper.testing.mcp_echo", "--log", str(log)],
            "env": {"ECHO_TOKEN": "${GEMINI_TEST_SECRET}"},
        }
    }
    call = {"name": "mcp_echo_echo", "arguments": {"text": "PING"}}
    look = shell(f"cat ~/.gemini/settings.json; grep -rl {SECRET} ~ .. 2>/dev/null; true")
    server = kit.server(kit.script([{"tool_calls": [call]}, look, {"text": "Echoed."}]))
    spec = kit.spec([{"name": "mcp", "prompt": "Echo.", "assert": "assert True"}], mcp=mcp)
    run = kit.run(spec, server, env={"GEMINI_TEST_SECRET": SECRET})
    attempt = ok_run(run)
    outputs = [t.get("tool_output") or "" for t in tool_turns(attempt)]
    assert "PING" in outputs[0], outputs
    assert "${CALIPER_MCP_SECRET_0}" in outputs[1], outputs  # the reference, inside the run
    assert SECRET not in outputs[1], outputs  # no file of the sandbox holds the value
    files = [p for p in kit.root.rglob("*") if p.is_file() and p != log]
    holding = [str(p) for p in files if SECRET.encode() in p.read_bytes()]
    assert not holding, holding


def test_no_api_key_stops_at_once_with_exit_3(kit: ConformanceKit) -> None:
    """Neither a key nor a saved login: exit 3 with the fix, fast, nothing saved."""
    server = kit.server(kit.script([{"text": "x"}]))
    spec = kit.spec([{"name": "k", "prompt": "Hi.", "assert": "assert True"}])
    start = time.monotonic()
    run = kit.run(spec, server, env={"GEMINI_API_KEY": ""})
    assert run.returncode == 3, run.describe()
    assert "GEMINI_API_KEY" in run.stderr and "Traceback" not in run.stderr
    assert time.monotonic() - start < 10
    assert run.results is None and not server.model_requests()


def test_sigterm_ends_gemini_and_its_mcp_server(kit: ConformanceKit) -> None:
    """SIGTERM while gemini waits for the model: exit 143, no process of the sandbox left."""
    mcp = {"echo": {"command": sys.executable, "args": ["-m", "caliper.testing.mcp_echo"]}}
    server = kit.server(kit.script([shell("true"), {"text": "Too late.", "delay": 60}]))
    spec = kit.spec([{"name": "slow", "prompt": "Wait.", "assert": "assert True"}], mcp=mcp)
    sandboxes = kit.root / "sandboxes-term"
    sandboxes.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(kit.home.path),
        "LANG": "C.UTF-8",
        "CALIPER_TMPDIR": str(sandboxes),
        "GEMINI_CLI_PATH": str(kit.cli.path),
        **(kit.suite.configure_user_home(kit.home.path, server.url) or {}),
    }
    (kit.project / ".caliper").mkdir(exist_ok=True)
    argv = [str(caliper_executable()), "run", str(spec), "--k", "1", "--model", kit.suite.engine()]
    process = subprocess.Popen(
        argv, cwd=kit.project, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not server.model_requests():
            time.sleep(0.2)
        time.sleep(2)  # gemini runs the tool and sends the next (slow) request
        assert server.model_requests(), "gemini never reached the model server"
        assert processes_mentioning(str(sandboxes)), "gemini is not running"
    finally:
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    survivors: list[str] = []
    for _ in range(50):
        survivors = processes_mentioning(str(sandboxes))
        if not survivors:
            break
        time.sleep(0.1)
    assert not survivors, survivors


def test_matrix_with_claude_and_gemini(kit: ConformanceKit, agent_cli: Any) -> None:
    """``--model claude-code:… --model gemini:…`` in one run: each engine activates the skill
    through its own tool, and each engine's result is saved."""
    from caliper_backend_claude.testing import ClaudeScripted

    claude = ClaudeScripted()
    script = kit.script(
        rules=[
            {
                "when": {"api": "anthropic"},
                "turns": [
                    {"tool_calls": [{"name": "Skill", "arguments": {"skill": "alpha-target"}}]},
                    {"text": "Alpha chores done."},
                ],
            },
            {
                "when": {"api": "gemini"},
                "turns": [
                    {"tool_calls": [{"name": "activate_skill",
                                     "arguments": {"name": "alpha-target"}}]},
                    {"text": "Alpha chores done."},
                ],
            },
        ]
    )  # fmt: skip
    server = kit.server(script)
    spec = kit.spec(
        [{"name": "both", "prompt": "Do my alpha chores.", "activates": ["alpha-target"]}],
        skills=[kit.skill("alpha-target"), kit.skill("beta-neighbour")],
    )
    env = {
        claude.backend().cli_path_variable: str(agent_cli("claude").path),
        **claude.configure_user_home(kit.home.path, server.url),
    }
    run = kit.run(spec, server, "--model", f"claude-code:{claude.model_for_tests}", env=env)
    assert run.returncode == 0, run.describe()
    assert {r.api for r in server.model_requests()} == {"anthropic", "gemini"}
    # a matrix saves one run per engine: read both (the harness keeps only the last)
    assert run.results_path is not None, run.describe()
    saved = sorted(run.results_path.parent.glob("*.json"))
    assert len(saved) == 2, run.describe()
    attempts = [
        a for path in saved for t in json.loads(path.read_text())["tasks"] for a in t["attempts"]
    ]
    assert len(attempts) == 2, run.describe()
    assert all(a["activated"] == ["alpha-target"] for a in attempts), run.describe()


def test_gemini_lists_every_description_whole(kit: ConformanceKit) -> None:
    """No listing budget (``skill_listing_budget is None``): 120 descriptions of 250
    characters, past claude's and codex's budgets, all reach the model whole."""
    from caliper.testing.listing import skills_for, whole_descriptions

    assert kit.suite.backend().skill_listing_budget is None
    entries = skills_for(kit, 120)
    server = kit.server(kit.script([{"text": "Nothing to load."}]))
    spec = kit.spec([{"name": "many", "prompt": "Hello.", "assert": "assert True"}], skills=entries)
    run = kit.run(spec, server)
    ok_run(run)
    listed = [r for r in server.model_requests() if "listed-0000" in r.sent_text()]
    assert listed, run.describe()
    assert whole_descriptions(listed[0].sent_text()) == 120
    assert "Warning: " not in run.stderr
