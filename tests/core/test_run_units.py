"""Pure pieces of the runner: forbidden-read matching, ${VAR} resolution, outcome rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from caliper.errors import SetupError, SpecError
from caliper.plugin.attempt import AgentStatus, AttemptResult, Turn
from caliper.plugin.judge import Judge, JudgeContext, Verdict
from caliper.plugin.mcp import SecretSet, resolve_servers
from caliper.results.models import Outcome
from caliper.runner.attempt.forbidden import find_forbidden_reads, forbidden_patterns
from caliper.runner.attempt.judging import NOT_RUN_CHEAT, NOT_RUN_REASON, judge_attempt
from caliper.spec.model import McpServer, Task

# -- forbidden reads ------------------------------------------------------------------------------
PATTERNS = forbidden_patterns(
    [r".*\.env$", r"answers/"], spec_file_name="demo.eval.yaml", spec_path="/proj/demo.eval.yaml"
)


def tool(value: Any, name: str = "Read") -> Turn:
    return Turn(role="tool", tool_name=name, tool_input=value)


@pytest.mark.parametrize(
    "tool_input",
    [
        {"path": "/proj/demo.eval.yaml"},
        {"command": "cat ../demo.eval.yaml"},
        "cat demo.eval.yaml",
        {"command": "ls .caliper/results"},
        {"path": "/proj/.caliper/results/demo/x.json"},
        {"path": "/proj/config/.env"},
        {"args": ["grep", "x", "answers/key.txt"]},
    ],
)
def test_forbidden_inputs_are_found(tool_input):
    hits = find_forbidden_reads([tool(tool_input)], PATTERNS)
    assert len(hits) == 1 and hits[0].startswith("Read: ")


@pytest.mark.parametrize(
    "turn",
    [
        tool({"path": "notes/demo.eval.yaml.bak"}),
        tool({"path": "my.caliper/x"}),
        tool({"path": "src/app.py"}),
        Turn(role="assistant", content="I will not read demo.eval.yaml"),
        tool(None),
    ],
)
def test_innocent_turns_are_not_flagged(turn):
    assert find_forbidden_reads([turn], PATTERNS) == []


def test_bad_forbidden_regex_is_a_spec_error():
    with pytest.raises(SpecError, match="not a valid regex"):
        forbidden_patterns(["(unclosed"], spec_file_name="a.eval.yaml", spec_path="/a.eval.yaml")


# -- ${VAR} resolution and redaction ------------------------------------------------------------
def test_resolve_servers_substitutes_and_collects_secrets():
    server = McpServer(
        name="w",
        command="srv",
        env={"TOKEN": "${TOK}", "MODE": "fast"},
        url="https://h/${TOK}",
        headers={"Authorization": "Bearer ${TOK}"},
        transport="http",
    )
    resolved = resolve_servers([server], {"TOK": "abcd1234"})
    (config,) = resolved.servers
    assert config.env == {"TOKEN": "abcd1234", "MODE": "fast"}
    assert config.headers == {"Authorization": "Bearer abcd1234"}
    assert config.url == "https://h/abcd1234"
    assert "abcd1234" in resolved.secrets.values
    assert "fast" not in resolved.secrets.values
    assert resolved.secrets.redact("x Bearer abcd1234 y") == "x [redacted] y"


def test_unset_variable_is_a_setup_error_naming_everything():
    server = McpServer(name="gdrive", headers={"Authorization": "Bearer ${GDRIVE_TOKEN}"})
    with pytest.raises(SetupError) as info:
        resolve_servers([server], {})
    message = info.value.message
    assert "'gdrive'" in message and "headers.Authorization" in message
    assert "GDRIVE_TOKEN" in message


def test_redact_value_keeps_shapes():
    secrets = SecretSet(frozenset({"hunter22"}))
    value = {"a": ["x hunter22", 3], "b": ("hunter22",), "c": None}
    assert secrets.redact_value(value) == {
        "a": ["x [redacted]", 3],
        "b": ("[redacted]",),
        "c": None,
    }
    turns = secrets.redact_turns(
        [Turn(role="tool", tool_input={"q": "hunter22"}, tool_output="hunter22!")]
    )
    assert turns[0].tool_input == {"q": "[redacted]"} and turns[0].tool_output == "[redacted]!"


# -- outcome rules ------------------------------------------------------------------------------
class Scripted(Judge):
    """A judge whose verdict is given up front; records whether it ran."""

    def __init__(
        self,
        key: str,
        passed: bool | None,
        *,
        uses_llm: bool = False,
        scores_outcome: bool = True,
        scores_activation: bool = False,
    ):
        self.key = key
        self.passed = passed
        self.uses_llm = uses_llm
        self.scores_outcome = scores_outcome
        self.scores_activation = scores_activation
        self.calls = 0

    def check(self, context: JudgeContext) -> Verdict:
        self.calls += 1
        if self.passed is None:
            return Verdict(passed=None, error=f"{self.key} broke")
        return Verdict(passed=self.passed, reason=f"{self.key} said {self.passed}")


class Crashing(Judge):
    key = "crash"

    def check(self, context: JudgeContext) -> Verdict:
        raise RuntimeError("judge bug")


def no_judge_model(prompt: str, *, timeout: float | None = None) -> Any:
    raise AssertionError("these judges never ask a model")


def _judge(judges: dict[str, Judge], keys: list[str] | None = None, **options: Any):
    checks = {k: "v" for k in (keys or judges)}
    activation = next((k for k in checks if k in judges and judges[k].scores_activation), None)
    task = Task(name="t", prompt="p", index=0, checks=checks, activation_key=activation)
    result = AttemptResult(status=AgentStatus.COMPLETED, activated=[])

    def context(key: str) -> JudgeContext:
        return JudgeContext(
            task_name="t",
            task_prompt="p",
            value="v",
            attempt=result,
            workdir=Path("."),
            spec_dir=Path("."),
            declared_skills=(),
            installed_skills=(),
            timeout=1,
            ask=no_judge_model,
        )

    return judge_attempt(task, judges, context, **options)


def test_all_passing_is_pass():
    result = _judge(
        {"assert": Scripted("assert", True), "expect": Scripted("expect", True, uses_llm=True)}
    )
    assert result.outcome is Outcome.PASS and result.reason is None


def test_failing_local_judge_skips_llm_judges():
    llm = Scripted("expect", True, uses_llm=True)
    result = _judge({"expect": llm, "assert": Scripted("assert", False)})
    assert result.outcome is Outcome.TASK_FAIL
    assert result.reason == "assert: assert said False"
    assert llm.calls == 0
    assert [c.key for c in result.checks] == ["expect", "assert"]  # task key order
    assert result.checks[0].reason == NOT_RUN_REASON and result.checks[0].passed is None


def test_cheat_never_calls_llm_judges():
    llm = Scripted("expect", True, uses_llm=True)
    local = Scripted("assert", True)
    result = _judge({"assert": local, "expect": llm}, llm_allowed=False)
    assert llm.calls == 0 and local.calls == 1
    assert result.checks[1].reason == NOT_RUN_CHEAT


def test_undecided_judge_is_judge_error():
    result = _judge(
        {"assert": Scripted("assert", True), "expect": Scripted("expect", None, uses_llm=True)}
    )
    assert result.outcome is Outcome.JUDGE_ERROR
    assert "expect broke" in result.reason


def test_crashing_judge_is_judge_error_not_a_crash():
    result = _judge({"crash": Crashing()})
    assert result.outcome is Outcome.JUDGE_ERROR
    assert "RuntimeError: judge bug" in result.reason


def test_only_activation_is_not_checked():
    result = _judge(
        {"activates": Scripted("activates", True, scores_outcome=False, scores_activation=True)}
    )
    assert result.outcome is Outcome.NOT_CHECKED
    assert result.activation_passed is True


# -- live progress ------------------------------------------------------------------------------
def _progress(terminal: bool):
    import io

    from rich.console import Console

    from caliper.results.models import AttemptRecord
    from caliper.runner.progress import Progress

    out = io.StringIO()
    console = Console(file=out, force_terminal=terminal, width=80)
    tasks = [Task(name="alpha", prompt="p", index=0), Task(name="beta", prompt="p", index=1)]
    with Progress(tasks, 3, console=console, title="demo") as progress:
        progress.attempt_done(AttemptRecord(task_name="alpha", attempt=1, outcome=Outcome.PASS))
        progress.attempt_done(AttemptRecord(task_name="beta", attempt=1, outcome=Outcome.TIMEOUT))
        progress.task_aborted("beta")
        table = progress._table()
    return out.getvalue(), table


def test_progress_counts_per_task_on_a_terminal():
    text, table = _progress(True)
    assert "alpha" in text and "1/3" in text
    cells = [list(column.cells) for column in table.columns]
    assert cells[0] == ["alpha", "beta"]
    assert cells[1] == ["1/3", "1/3 aborted"]
    assert cells[2:] == [["1", "0"], ["0", "0"], ["0", "1"]]


def test_progress_is_quiet_when_not_a_terminal():
    text, _ = _progress(False)
    assert text == ""


def test_progress_builds_its_table_on_its_clock_not_per_attempt(monkeypatch):
    # a run of 500 tasks rebuilt a 500-row table after each attempt (issue 20)
    import io

    from rich.console import Console

    from caliper.results.models import AttemptRecord
    from caliper.runner.progress import Progress

    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    tasks = [Task(name=f"t{i}", prompt="p", index=i) for i in range(50)]
    built = []
    real = Progress._table
    monkeypatch.setattr(Progress, "_table", lambda self: built.append(1) or real(self))
    with Progress(tasks, 10, console=console) as progress:
        for n in range(500):
            task = f"t{n % 50}"
            progress.attempt_done(AttemptRecord(task_name=task, attempt=n, outcome=Outcome.PASS))
    assert 0 < len(built) < 50  # drawn a few times a second, not 500 times
    assert "10/10" in console.file.getvalue()  # the last drawing has every count
