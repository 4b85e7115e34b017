"""Ablation (what gets installed, what activation shows) and MCP secrets (resolved, redacted)."""

from __future__ import annotations

import json

from caliper_fakeagent.harness import Workspace

TWO_SKILLS = """\
    skills:
      - ./skills/greeter
      - ./skills/formatter
    tasks:
      - name: loads both
        prompt: |
          fake: load greeter
          fake: load formatter
        activates: [greeter, formatter]
    """


def _space(tmp_path) -> Workspace:
    space = Workspace.create(tmp_path)
    space.skill("greeter")
    space.skill("formatter")
    return space


def test_full_neighbourhood_is_installed(tmp_path):
    space = _space(tmp_path)
    run = space.run(space.spec(TWO_SKILLS), "--k", "1")
    assert run.returncode == 0, run.stderr
    (attempt,) = run.attempts("loads both")
    assert attempt["activated"] == ["greeter", "formatter"]
    assert attempt["activation_passed"] is True


def test_ablated_skill_is_not_installed(tmp_path):
    space = _space(tmp_path)
    run = space.run(space.spec(TWO_SKILLS), "--k", "1", "--ablate", "greeter")
    assert run.returncode == 0, run.stderr
    (attempt,) = run.attempts("loads both")
    assert attempt["activated"] == ["formatter"]
    assert attempt["activation_passed"] is True  # the ablated skill leaves the expected set
    skill_load = [t for t in attempt["transcript"] if t["tool_name"] == "Skill"]
    assert skill_load[0]["is_error"] is True  # greeter was not there to load
    meta = run.results["meta"]
    assert meta["ablated"] == ["greeter"]
    flags = {s["name"]: s["ablated"] for s in meta["skill_snapshots"]}
    assert flags == {"greeter": True, "formatter": False}


def test_whole_neighbourhood_ablated_records_no_activation(tmp_path):
    space = _space(tmp_path)
    run = space.run(
        space.spec(TWO_SKILLS), "--k", "1", "--ablate", "greeter", "--ablate", "formatter"
    )
    assert run.returncode == 0, run.stderr
    (attempt,) = run.attempts("loads both")
    assert attempt["activated"] is None
    assert attempt["activation_passed"] is None


def test_mcp_secrets_reach_the_agent_but_are_never_saved(tmp_path):
    space = Workspace.create(tmp_path)
    secret = "s3cr3t-token-value-42"
    spec = space.spec("""\
        mcp:
          weather:
            command: python3
            args: [server.py]
            env:
              API_TOKEN: ${CALIPER_TEST_TOKEN}
          remote:
            type: http
            url: https://example.invalid/${CALIPER_TEST_PATH}
            headers:
              Authorization: Bearer ${CALIPER_TEST_TOKEN}
        tasks:
          - name: shows its config
            prompt: |
              fake: mcp
            assert: |
              import os
              # the agent really got the secret: it printed it (before redaction)
              assert True
          - name: fails with the secret
            prompt: |
              fake: read /nonexistent/s3cr3t-token-value-42
              fake: say s3cr3t-token-value-42
            assert: "assert False, 's3cr3t-token-value-42 was wrong'"
        """)
    output = tmp_path / "copy.json"
    run = space.run(
        spec,
        "--k",
        "1",
        "--output",
        str(output),
        env=space.env(CALIPER_TEST_TOKEN=secret, CALIPER_TEST_PATH="tools-path"),
    )
    assert run.returncode == 0, run.stderr
    (shown,) = run.attempts("shows its config")
    assert shown["outcome"] == "pass"
    assert "[redacted]" in shown["final_answer"]
    config = json.loads(shown["final_answer"])
    assert config["weather"]["env"]["API_TOKEN"] == "[redacted]"
    assert config["remote"]["headers"]["Authorization"] == "[redacted]"
    assert config["remote"]["url"] == "[redacted]"
    (failed,) = run.attempts("fails with the secret")
    assert failed["outcome"] == "task_fail"
    for path in (run.results_path, output):
        text = path.read_text()
        assert secret not in text
    assert secret not in run.stdout + run.stderr


def test_the_backends_mcp_preflight_stops_the_run_before_any_attempt(tmp_path):
    """``Backend.check_mcp_servers`` sees the resolved servers once, before any attempt."""
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        mcp:
          unreachable-docs:
            type: http
            url: http://127.0.0.1:9/${CALIPER_TEST_PATH}
        tasks:
          - name: never runs
            prompt: |
              fake: say hello
            assert: assert True
        """)
    run = space.run(spec, "--k", "2", env=space.env(CALIPER_TEST_PATH="mcp-path"))
    assert run.returncode == 3, run.stderr
    assert "MCP server 'unreachable-docs' cannot be reached" in run.stderr
    assert "references resolved: True" in run.stderr
    assert "mcp-path" not in run.stderr + run.stdout
    assert "Traceback" not in run.stderr
    assert run.results_path is None  # no attempt ran, nothing was saved
