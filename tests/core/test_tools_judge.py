"""The built-in `tools` judge: its value's form, the matcher, and the messages it fails with."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from caliper.default_plugins.tools_judge import ToolsJudge
from caliper.host.plugins import PluginHost
from caliper.plugin.attempt import AgentStatus, AttemptResult, Turn
from caliper.plugin.judge import JudgeContext, Verdict
from caliper.plugin.tools import ToolNames, tool_calls, transcript_data

CLAUDE = ToolNames(
    "claude",
    {
        "shell": ("Bash",),
        "read": ("Read",),
        "write": ("Write",),
        "edit": ("Edit",),
        "skill": ("Skill",),
    },
)
CODEX = ToolNames(
    "codex",
    {"shell": ("shell",), "write": ("apply_patch",), "edit": ("apply_patch",)},
    shell_command=lambda value: value["command"].removeprefix("/bin/bash -lc ").strip("'"),
)


def bash(command: str) -> Turn:
    return Turn(role="tool", tool_name="Bash", tool_input={"command": command})


def result_turn() -> Turn:
    return Turn(role="tool", tool_output="ok")  # Claude Code's separate tool-result turn


def judge(value: Any, turns: list[Turn], names: ToolNames | None = CLAUDE) -> Verdict:
    def no_engine(prompt: str, *, timeout: float | None = None) -> Any:
        raise AssertionError("the tools judge never asks a model")

    context = JudgeContext(
        task_name="t",
        task_prompt="p",
        value=value,
        attempt=AttemptResult(status=AgentStatus.COMPLETED, transcript=tuple(turns)),
        workdir=Path("/nonexistent"),
        spec_dir=Path("/nonexistent"),
        declared_skills=(),
        installed_skills=(),
        timeout=5.0,
        ask=no_engine,
        tools=names,
    )
    assert not ToolsJudge().validate(value, spec_dir=Path("."), declared_skills=())
    return ToolsJudge().check(context)


def assert_context(tmp_path: Path, code: str, turns: tuple[Turn, ...]) -> JudgeContext:
    """An ``assert:`` check of ``code`` on an attempt whose transcript is ``turns`` (Claude
    Code's tool names), with a fresh working folder."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    return JudgeContext(
        task_name="t",
        task_prompt="p",
        value=code,
        attempt=AttemptResult(status=AgentStatus.COMPLETED, transcript=turns),
        workdir=workdir,
        spec_dir=tmp_path,
        declared_skills=(),
        installed_skills=(),
        timeout=30.0,
        ask=lambda prompt, timeout=None: None,  # type: ignore[arg-type,return-value]
        tools=CLAUDE,
    )


def problems(value: Any) -> list[str]:
    return [p.message for p in ToolsJudge().validate(value, spec_dir=Path("."), declared_skills=())]


def test_registers_through_its_entry_point() -> None:
    judges = PluginHost().judges()
    assert isinstance(judges["tools"], ToolsJudge)
    assert judges["tools"].scores_outcome and not judges["tools"].uses_llm


def test_called_by_vocabulary_name_and_by_the_backends_own_name() -> None:
    turns = [Turn(role="assistant", content="hi"), bash("ls"), result_turn()]
    assert judge([{"called": "shell"}], turns).passed is True
    assert judge([{"called": "Bash"}], turns).passed is True
    verdict = judge([{"called": "read"}], turns)
    assert verdict.passed is False
    assert verdict.reason == "read was never called; 1 tool calls in all"


def test_result_turns_are_not_calls() -> None:
    calls = tool_calls([bash("a"), result_turn(), bash("b"), result_turn()], CLAUDE)
    assert [(c.number, c.turn, c.text) for c in calls] == [(1, 1, "a"), (2, 3, "b")]


def test_not_called_names_the_offending_call() -> None:
    turns = [bash("ls"), result_turn(), bash("curl -s http://x/api")]
    verdict = judge([{"not_called": "shell", "input": "^curl "}], turns)
    assert verdict.passed is False
    assert verdict.reason == (
        "shell with input /^curl / was called: call 2 (turn 3): Bash `curl -s http://x/api`"
    )
    assert judge([{"not_called": "shell", "input": "^wget "}], turns).passed is True


@pytest.mark.parametrize(
    ("calls", "bounds", "passed"),
    [
        (0, {}, False),
        (1, {}, True),
        (5, {"at_most": 5}, True),
        (6, {"at_most": 5}, False),
        (0, {"at_least": 0, "at_most": 2}, True),
        (2, {"at_least": 3}, False),
        (3, {"at_least": 3}, True),
    ],
)
def test_counts(calls: int, bounds: dict[str, int], passed: bool) -> None:
    turns = [bash(f"poll {i}") for i in range(calls)]
    assert judge([{"called": "shell", "input": "^poll", **bounds}], turns).passed is passed


def test_too_many_calls_names_the_first_one_over() -> None:
    verdict = judge([{"called": "shell", "at_most": 2}], [bash(f"poll {i}") for i in range(4)])
    assert verdict.reason == (
        "shell was called 4 times (at most 2 wanted); the first call over: "
        "call 3 (turn 3): Bash `poll 2`"
    )


def test_order_is_a_subsequence() -> None:
    read = Turn(role="tool", tool_name="Read", tool_input={"file_path": "a"})
    edit = Turn(role="tool", tool_name="Edit", tool_input={"file_path": "a"})
    steps = {"order": ["read", "edit", {"called": "shell", "input": "^git commit"}]}
    good = [read, bash("ls"), edit, bash("git commit -m x")]
    assert judge([steps], good).passed is True
    bad = [bash("git commit -m x"), read, edit]
    verdict = judge([steps], bad)
    assert verdict.passed is False
    assert verdict.reason == (
        "shell with input /^git commit/ was not called after call 3 (turn 3): Edit "
        '`{"file_path": "a"}`; only before: call 1 (turn 1): Bash `git commit -m x`'
    )


def test_mcp_tools_by_server_and_tool() -> None:
    call = Turn(role="tool", tool_name="mcp__github__create_issue", tool_input={"title": "t"})
    assert judge([{"called": "mcp:github/create_issue"}], [call]).passed is True
    assert judge([{"called": "mcp:github/*"}], [call]).passed is True
    assert judge([{"called": "mcp:gitlab/*"}], [call]).passed is False
    opencode = ToolNames("opencode", {"shell": ("bash",)}, mcp_name=lambda s, t: f"{s}_{t}")
    other = Turn(role="tool", tool_name="github_create_issue", tool_input={})
    assert judge([{"called": "mcp:github/create_issue"}], [other], opencode).passed is True


def test_pattern_on_the_backends_name() -> None:
    call = Turn(role="tool", tool_name="WebFetch", tool_input={"url": "u"})
    assert judge([{"called": "/^Web/"}], [call]).passed is True
    assert judge([{"not_called": "/^Web/"}], [call]).passed is False


def test_codex_shell_input_is_the_unwrapped_script() -> None:
    call = Turn(
        role="tool", tool_name="shell", tool_input={"command": "/bin/bash -lc 'git commit'"}
    )
    assert judge([{"called": "shell", "input": "^git commit"}], [call], CODEX).passed is True


def test_a_kind_the_backend_lacks_is_undecided_not_failed() -> None:
    verdict = judge([{"called": "skill"}], [], CODEX)
    assert verdict.passed is None
    assert verdict.error is not None and "codex backend has no skill tool" in verdict.error


def test_without_a_backend_no_calls_still_decides() -> None:
    assert judge([{"not_called": "write"}], [], None).passed is True
    assert judge([{"called": "write"}], [], None).passed is False
    assert judge([{"called": "write"}], [bash("x")], None).passed is None


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("shell", "expected a non-empty list of checks"),
        ([{"called": "shel"}], "Did you mean 'shell'?"),
        ([{"called": "mcp:github"}], "is not mcp:SERVER/TOOL"),
        ([{"called": "shell", "at_least": 3, "at_most": 2}], "at_least 3 is more than at_most 2"),
        ([{"called": "shell", "at_most": 0}], "write not_called instead"),
        ([{"called": "shell", "at_least": -1}], "whole number"),
        ([{"not_called": "shell", "at_most": 2}], "not_called takes no at_least"),
        ([{"called": "shell", "input": "("}], "not a valid regular expression"),
        ([{"called": "shell", "not_called": "read"}], "exactly one of"),
        ([{"caled": "shell"}], "Did you mean 'called'?"),
        ([{"order": ["read"]}], "at least two"),
    ],
)
def test_validate_problems(value: Any, message: str) -> None:
    found = problems(value)
    assert any(message in p for p in found), found


def test_backend_names_and_vocabulary_pass_validation() -> None:
    names = ("Bash", "Read", "apply_patch", "skill_view", "bash", "patch", "mcp:s/t")
    value = [{"called": n} for n in names]
    assert problems(value) == []


def test_transcript_data_is_json() -> None:
    data = transcript_data([Turn(role="assistant", content="hi"), bash("ls")], CLAUDE)
    assert json.loads(json.dumps(data))["calls"] == [
        {
            "number": 1,
            "turn": 2,
            "tool": "Bash",
            "kind": "shell",
            "input": {"command": "ls"},
            "text": "ls",
        }
    ]
    assert data["backend"] == "claude" and len(data["turns"]) == 2


def test_assert_scripts_get_the_transcript_file(tmp_path: Path) -> None:
    import attrs

    from caliper.default_plugins.assert_judge import AssertJudge

    code = (
        "import json, os\n"
        "data = json.load(open(os.environ['CALIPER_TRANSCRIPT']))\n"
        "assert data['backend'] == 'claude', data\n"
        "assert [c['text'] for c in data['calls'] if c['kind'] == 'shell'] == ['git status']\n"
    )
    context = assert_context(tmp_path, code, (bash("git status"),))
    assert AssertJudge().check(context).passed is True
    other = attrs.evolve(context, attempt=AttemptResult(status=AgentStatus.COMPLETED))
    assert AssertJudge().check(other).passed is False


def test_a_lone_surrogate_in_the_transcript_reaches_the_assert_as_a_replacement(
    tmp_path: Path,
) -> None:
    """Model text that is not valid Unicode (a lone surrogate) once made writing the transcript
    file fail, so every such attempt was a judge error; it is written with U+FFFD instead."""
    from caliper.default_plugins.assert_judge import AssertJudge

    code = (
        "import json, os\n"
        "data = json.load(open(os.environ['CALIPER_TRANSCRIPT'], encoding='utf-8'))\n"
        "assert data['turns'][0]['content'] == 'half \\ufffd pair', data['turns'][0]\n"
    )
    context = assert_context(tmp_path, code, (Turn(role="assistant", content="half \ud800 pair"),))
    verdict = AssertJudge().check(context)
    assert verdict.passed is True, verdict


def test_mcp_kind_follows_the_backends_naming() -> None:
    gemini = ToolNames(
        "gemini", {"shell": ("run_shell_command",)}, mcp_name=lambda s, t: f"mcp_{s}_{t}"
    )
    call = Turn(role="tool", tool_name="mcp_echo_echo", tool_input={})
    assert [c.kind for c in tool_calls([call], gemini)] == ["mcp"]
    assert judge([{"called": "mcp:echo/echo"}], [call], gemini).passed is True
    assert judge([{"called": "mcp:echo/*"}], [call], gemini).passed is True


def test_regrade_reads_the_runs_backend_vocabulary() -> None:
    from caliper.commands.regrade import _tool_names

    names = _tool_names(PluginHost(), "claude-code")
    assert names is not None and names.vocabulary["shell"] == ("Bash",)
    assert _tool_names(PluginHost(), "no-such-backend") is None
    assert _tool_names(PluginHost(), None) is None


def test_a_killed_assert_leaves_nothing_in_the_system_temp_folder(tmp_path: Path) -> None:
    """kill -9 of caliper while an assert sleeps: its code, result and transcript files were
    in the sandbox's TMPDIR (which the ledger removes), none in the system temp folder."""
    import signal
    import subprocess
    import sys
    import time

    system_tmp, sandbox_tmp = tmp_path / "system-tmp", tmp_path / "sandbox" / "tmp"
    system_tmp.mkdir()
    sandbox_tmp.mkdir(parents=True)
    marker = tmp_path / "started"
    driver = (
        "import sys\n"
        "from pathlib import Path\n"
        "from caliper.default_plugins.assert_judge import AssertJudge\n"
        "from caliper.plugin.judge import JudgeContext\n"
        "from caliper.plugin.attempt import AgentStatus, AttemptResult\n"
        "work, spec, tmp, marker = map(Path, sys.argv[1:5])\n"
        "code = ('import os, pathlib, time\\n'\n"
        "        f'pathlib.Path({str(marker)!r})'\n"
        "        '.write_text(os.environ[\"CALIPER_TRANSCRIPT\"])\\n'\n"
        "        'time.sleep(60)\\n')\n"
        "context = JudgeContext(task_name='t', task_prompt='p', value=code,\n"
        "    attempt=AttemptResult(status=AgentStatus.COMPLETED), workdir=work, spec_dir=spec,\n"
        "    declared_skills=(), installed_skills=(), timeout=120.0, ask=lambda *a, **k: None,\n"
        "    agent_env={'TMPDIR': str(tmp)})\n"
        "AssertJudge().check(context)\n"
    )
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "TMPDIR": str(system_tmp)}
    proc = subprocess.Popen(
        [sys.executable, "-c", driver, str(work), str(tmp_path), str(sandbox_tmp), str(marker)],
        env=env,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            assert proc.poll() is None, "the driver ended before the assert started"
            time.sleep(0.05)
        assert marker.exists(), "the assert never started"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    transcript = Path(marker.read_text())
    assert transcript.is_relative_to(sandbox_tmp) and transcript.is_file()
    # the warm assert server's own caliper-warm-* folder is per process, not per assert
    assert [p.name for p in system_tmp.iterdir() if p.name.startswith("caliper-assert-")] == []
