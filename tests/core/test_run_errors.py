"""Problems caught before (or that stop) a run: each gets one clear message and exit code."""

from __future__ import annotations

import subprocess

import pytest

from caliper.errors import UsageError
from caliper.host.engine import Engine
from caliper.plugin.attempt import AttemptResult
from caliper.plugin.backend import Backend
from caliper.plugin.skills import ResolvedSkill
from caliper.runner.run.prepare import check_ablation, check_mcp_support
from caliper.spec.model import McpServer, Spec
from caliper_fakeagent.harness import CALIPER, Workspace

SIMPLE = """\
    skills:
      - ./skills/greeter
      - ./skills/formatter
    tasks:
      - name: one
        prompt: "fake: say hi"
        assert: "assert True"
    """


@pytest.fixture
def space(tmp_path) -> Workspace:
    space = Workspace.create(tmp_path)
    space.skill("greeter")
    space.skill("formatter")
    return space


def test_missing_cli_fails_before_any_attempt(space):
    spec = space.spec(SIMPLE)
    run = space.run(spec, env=space.env(FAKE_AGENT_CLI_PATH=str(space.root / "nope")))
    assert run.returncode == 3
    assert "needs the `fake-agent` CLI" in run.stderr
    assert "FAKE_AGENT_CLI_PATH" in run.stderr
    assert "Traceback" not in run.stderr
    assert run.results_path is None


def test_unknown_ablate_name_suggests_the_closest(space):
    spec = space.spec(SIMPLE)
    run = space.run(spec, "--ablate", "greter")
    assert run.returncode == 2
    assert "--ablate 'greter'" in run.stderr
    assert "Did you mean 'greeter'?" in run.stderr
    assert "formatter" in run.stderr
    assert run.results_path is None


def test_unset_mcp_variable_names_server_field_and_variable(space):
    spec = space.spec("""\
        mcp:
          weather:
            command: python3
            env:
              API_TOKEN: ${CALIPER_TEST_UNSET_TOKEN}
        tasks:
          - name: one
            prompt: "fake: say hi"
            assert: "assert True"
        """)
    run = space.run(spec)
    assert run.returncode == 3, run.stderr
    assert "'weather'" in run.stderr
    assert "env.API_TOKEN" in run.stderr
    assert "CALIPER_TEST_UNSET_TOKEN" in run.stderr
    assert run.results_path is None


def test_invalid_spec_exits_2(space):
    spec = space.spec("tasks: [{name: x}]\n")
    run = space.run(spec)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr


def test_bad_forbidden_files_regex_exits_2_before_any_attempt(space):
    spec = space.spec("""\
        sandbox:
          forbidden_files: ["(unclosed"]
        tasks:
          - name: one
            prompt: "fake: say hi"
            assert: "assert True"
        """)
    run = space.run(spec)
    assert run.returncode == 2, run.stderr
    assert "(unclosed" in run.stderr
    assert run.results_path is None


def test_cli_that_cannot_log_in_stops_the_run_says_so_once_and_keeps_no_run(space):
    """A run whose agent never started has nothing to keep: no results file, no journal, and
    the login error printed once (it was once in a panel per attempt, then again at the end)."""
    spec = space.spec("""\
        tasks:
          - name: one
            prompt: "fake: auth-fail"
            assert: "assert True"
        """)
    run = space.run(spec, "--k", "5", "--workers", "4")
    out = run.stdout + run.stderr
    assert run.returncode == 3, out
    assert out.count("not logged in") == 1, out
    assert "No attempt got started, so nothing was saved." in run.stderr
    assert "Results saved to" not in out and "Traceback" not in out
    assert run.results_path is None
    assert not list((space.root / ".caliper").rglob("*.journal*"))
    listed = subprocess.run(
        [str(CALIPER), "list", str(spec)], capture_output=True, text=True, cwd=space.root
    )
    assert "No saved runs" in listed.stdout + listed.stderr, listed


def test_a_login_failure_after_measured_attempts_keeps_the_partial_run(space):
    spec = space.spec("""\
        tasks:
          - name: first
            prompt: "fake: say hi"
            assert: "assert True"
          - name: second
            prompt: "fake: auth-fail"
            assert: "assert True"
        """)
    run = space.run(spec, "--k", "1", "--workers", "1")
    assert run.returncode == 3, run.stderr
    meta = run.results["meta"]
    assert meta["partial"] is True and "not logged in" in meta["stop_reason"]
    assert [a["outcome"] for a in run.attempts("first")] == ["pass"]


def test_every_attempt_unusable_exits_1(space):
    spec = space.spec("""\
        tasks:
          - name: one
            prompt: "fake: exit 2"
            assert: "assert True"
        """)
    run = space.run(spec, "--k", "2")
    assert run.returncode == 1
    assert [a["outcome"] for a in run.attempts("one")] == ["infra_error", "infra_error"]


def test_help_explains_options_and_exit_codes():
    done = subprocess.run(
        [str(CALIPER), "run", "--help"], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 0
    for option in (
        "--k",
        "--workers",
        "--timeout",
        "--setup-timeout",
        "--ablate",
        "--fail-fast",
        "--model",
        "--judge-model",
        "--output",
        "--verbose",
    ):
        assert option in done.stdout
    for code in ("0 ", "1 ", "2 ", "3 ", "130"):
        assert f"  {code}" in done.stdout


# -- pre-flight checks, in process ---------------------------------------------------------------
class NoMcpBackend(Backend):
    id = "plain"
    cli_name = "plain-agent"

    def mcp_refusal(self) -> str | None:
        return "plain cannot load MCP servers; use --model fake."

    def run_attempt(self, request):  # pragma: no cover - never run
        return AttemptResult(status="completed")


def test_mcp_on_a_backend_without_mcp_is_refused(tmp_path):
    spec = Spec(path=tmp_path / "x.eval.yaml", name="x", mcp=(McpServer(name="weather"),))
    with pytest.raises(UsageError) as info:
        check_mcp_support(spec, Engine(NoMcpBackend(), None))
    assert "plain cannot load MCP servers; use --model fake." in info.value.message
    assert "x.eval.yaml" in info.value.message
    check_mcp_support(Spec(path=tmp_path / "y.eval.yaml", name="y"), Engine(NoMcpBackend(), None))


def test_check_ablation_accepts_declared_names(tmp_path):
    skills = [ResolvedSkill(name="alpha", description="", source_dir=tmp_path)]
    assert check_ablation(["alpha"], skills).skills == ("alpha",)
    with pytest.raises(UsageError, match="declares no skill"):
        check_ablation(["beta"], skills)
    assert check_ablation(["beta"], skills, ["beta"]).mcp == ("beta",)
