"""The built-in judges: `assert` (Python run in a child process) and `activates`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import caliper
from caliper.default_plugins.activation_judge import ActivationJudge
from caliper.default_plugins.assert_judge import AssertJudge
from caliper.host.plugins import PluginHost
from caliper.plugin.attempt import AgentStatus, AttemptResult
from caliper.plugin.judge import Judge, JudgeContext, Verdict


def context(
    tmp_path: Path,
    value: Any,
    *,
    activated: Any = None,
    undeclared: Any = None,
    installed: tuple[str, ...] = (),
    timeout: float = 30.0,
) -> JudgeContext:
    workdir = tmp_path / "work"
    workdir.mkdir(exist_ok=True)
    spec_dir = tmp_path / "spec"
    spec_dir.mkdir(exist_ok=True)

    def no_engine(prompt: str, *, timeout: float | None = None) -> Any:
        raise AssertionError("built-in judges never need an LLM")

    return JudgeContext(
        task_name="demo task",
        task_prompt="do it",
        value=value,
        attempt=AttemptResult(
            status=AgentStatus.COMPLETED, activated=activated, undeclared=undeclared
        ),
        workdir=workdir,
        spec_dir=spec_dir,
        declared_skills=("a", "b", "c"),
        installed_skills=installed,
        timeout=timeout,
        ask=no_engine,
    )


def test_both_register_through_entry_points() -> None:
    judges = PluginHost().judges()
    assert isinstance(judges["assert"], AssertJudge)
    assert isinstance(judges["activates"], ActivationJudge)
    assert judges["assert"].scores_outcome is True
    assert judges["activates"].scores_outcome is False


# -- assert: check ---------------------------------------------------------------------------


def test_assert_passes_and_sees_workdir_and_env(tmp_path: Path) -> None:
    ctx = context(
        tmp_path,
        (
            "import os\nfrom pathlib import Path\n"
            "assert Path.cwd() == Path(os.environ['CALIPER_WORKDIR'])\n"
            "assert Path(os.environ['CALIPER_SPEC_DIR']).name == 'spec'\n"
            "assert Path('made-by-agent.txt').read_text() == 'hi'\n"
            "assert __name__ == '__main__'\n"
        ),
    )
    (ctx.workdir / "made-by-agent.txt").write_text("hi")
    verdict = AssertJudge().check(ctx)
    assert verdict.passed is True, verdict


def test_assertion_message_is_the_reason(tmp_path: Path) -> None:
    verdict = AssertJudge().check(
        context(
            tmp_path,
            (
                "subject = 'x' * 80\n"
                "assert len(subject) <= 72, f'subject line is {len(subject)} chars'\n"
            ),
        )
    )
    assert verdict.passed is False
    assert verdict.reason == "subject line is 80 chars"
    assert verdict.details["line"] == 2


def test_bare_assert_names_its_line(tmp_path: Path) -> None:
    verdict = AssertJudge().check(context(tmp_path, "x = 1\nassert x == 2\n"))
    assert verdict.passed is False
    assert verdict.reason == "assertion failed (line 2: assert x == 2)"


def test_other_exception_fails_with_its_line(tmp_path: Path) -> None:
    verdict = AssertJudge().check(context(tmp_path, "import json\njson.loads('{bad')\n"))
    assert verdict.passed is False
    assert verdict.reason.startswith("JSONDecodeError: ")
    assert "(line 2: json.loads('{bad'))" in verdict.reason
    assert "Traceback" in verdict.details["stderr"]


def test_sys_exit(tmp_path: Path) -> None:
    assert AssertJudge().check(context(tmp_path, "import sys\nsys.exit(0)\n")).passed is True
    verdict = AssertJudge().check(context(tmp_path, "import sys\nsys.exit(3)\n"))
    assert (verdict.passed, verdict.reason) == (False, "the assertion exited with status 3")


def test_user_output_does_not_confuse_the_verdict(tmp_path: Path) -> None:
    verdict = AssertJudge().check(
        context(
            tmp_path,
            (
                'print(\'{"status": "pass"}\')\nimport sys\n'
                "print('noise', file=sys.stderr)\nassert False, 'really failed'\n"
            ),
        )
    )
    assert (verdict.passed, verdict.reason) == (False, "really failed")
    assert '"status"' in verdict.details["stdout"]


def test_timeout_is_a_judge_error(tmp_path: Path) -> None:
    verdict = AssertJudge().check(context(tmp_path, "import time\ntime.sleep(30)\n", timeout=0.5))
    assert verdict.passed is None
    assert verdict.error == "assert timed out after 0.5s"


def test_assert_file_runs_with_helpers_beside_it(tmp_path: Path) -> None:
    ctx = context(tmp_path, "./checks/check_out.py")
    checks = ctx.spec_dir / "checks"
    checks.mkdir()
    (checks / "helpers.py").write_text("def expected():\n    return 'ok'\n")
    (checks / "check_out.py").write_text(
        "from pathlib import Path\nfrom helpers import expected\n"
        "assert Path('out.txt').read_text() == expected(), 'wrong out.txt'\n"
    )
    (ctx.workdir / "out.txt").write_text("ok")
    assert AssertJudge().check(ctx).passed is True
    (ctx.workdir / "out.txt").write_text("nope")
    verdict = AssertJudge().check(ctx)
    assert (verdict.passed, verdict.reason) == (False, "wrong out.txt")
    (checks / "check_out.py").unlink()
    verdict = AssertJudge().check(ctx)
    assert verdict.passed is None
    assert "cannot read assert file" in verdict.error


# -- assert: validate ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "fragment"),
    [
        ("", "found an empty string"),
        (42, "found a number (42)"),
        (None, "found nothing"),
        ("x =", "does not compile: line 1"),
        ("a\n  b", "does not compile: line 2"),
        ("./missing.py", "./missing.py does not exist"),
        ("folder.py", "folder.py is a folder"),
        ("broken.py", "broken.py does not compile: line 1"),
    ],
)
def test_assert_validate(tmp_path: Path, value: Any, fragment: str) -> None:
    (tmp_path / "folder.py").mkdir()
    (tmp_path / "broken.py").write_text("def (:\n")
    problems = AssertJudge().validate(value, spec_dir=tmp_path, declared_skills=())
    assert len(problems) == 1
    assert fragment in problems[0].message
    assert problems[0].path == ()


def test_assert_validate_accepts_code_and_files(tmp_path: Path) -> None:
    (tmp_path / "ok.py").write_text("assert True\n")
    judge = AssertJudge()
    assert judge.validate("assert 1 + 1 == 2", spec_dir=tmp_path, declared_skills=()) == []
    assert judge.validate("ok.py", spec_dir=tmp_path, declared_skills=()) == []
    # Multi-line code that happens to end in .py is code, not a path.
    assert judge.validate("x = 'a'\ny = 'b.py'", spec_dir=tmp_path, declared_skills=()) == []


# -- activates -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "path", "fragment"),
    [
        ("a", (), "write [a]"),
        ({"a": 1}, (), "found a mapping"),
        (None, (), "found nothing"),
        (["a", 3], (1,), "expected a skill name, found a number (3)"),
        (["a", "a"], (1,), "'a' is listed twice"),
        (["bb"], (0,), "Did you mean 'b'?"),
        (["zzz"], (0,), "Declared skills (frontmatter names): a, b, c."),
    ],
)
def test_activates_validate(value: Any, path: tuple[Any, ...], fragment: str) -> None:
    problems = ActivationJudge().validate(
        value, spec_dir=Path("."), declared_skills=("a", "b", "c")
    )
    assert [p.path for p in problems] == [path]
    assert fragment in problems[0].message


def test_activates_validate_accepts_lists_and_empty() -> None:
    judge = ActivationJudge()
    assert judge.validate([], spec_dir=Path("."), declared_skills=()) == []
    assert judge.validate(["b", "a"], spec_dir=Path("."), declared_skills=("a", "b")) == []


@pytest.mark.parametrize(
    ("value", "activated", "installed", "passed", "reason"),
    [
        (["a"], ["a"], ("a", "b"), True, "expected [a], activated [a]"),
        (["a", "b"], ["b", "a", "a"], ("a", "b"), True, "expected [a, b], activated [a, b]"),
        (["a"], ["a", "b"], ("a", "b"), False, "unexpected: [b]"),
        (["a", "b"], ["a"], ("a", "b"), False, "missing: [b]"),
        ([], [], ("a", "b"), True, "expected nothing, activated nothing"),
        ([], ["a"], ("a", "b"), False, "expected nothing, activated [a]; unexpected: [a]"),
        (["a"], [], ("b",), True, "expected nothing, activated nothing ([a] ablated"),
        (["a"], ["b"], ("b",), False, "unexpected: [b] ([a] ablated for this run)"),
    ],
)
def test_activates_check(
    tmp_path: Path,
    value: list[str],
    activated: list[str],
    installed: tuple[str, ...],
    passed: bool,
    reason: str,
) -> None:
    verdict = ActivationJudge().check(
        context(tmp_path, value, activated=activated, installed=installed)
    )
    assert verdict.passed is passed
    assert reason in verdict.reason
    assert verdict.details["activated"] == activated


@pytest.mark.parametrize(
    ("value", "undeclared", "passed", "reason"),
    [
        ([], ["sub"], False, "unexpected: [sub] ([sub] not declared in the spec)"),
        (["a"], ["sub"], False, "expected [a], activated [a, sub]; unexpected: [sub]"),
        (["a"], [], True, "expected [a], activated [a]"),
    ],
)
def test_a_load_of_an_undeclared_skill_counts_against_the_exact_set(
    tmp_path: Path, value: list[str], undeclared: list[str], passed: bool, reason: str
) -> None:
    """Issue 11 item 2: a nested or user skill the model loaded is a load, never nothing."""
    activated = ["a"] if value else []
    verdict = ActivationJudge().check(
        context(tmp_path, value, activated=activated, undeclared=undeclared, installed=("a",))
    )
    assert verdict.passed is passed
    assert reason in verdict.reason


def test_activation_not_observable(tmp_path: Path) -> None:
    verdict = ActivationJudge().check(context(tmp_path, ["a"], activated=None, installed=("a",)))
    assert verdict.passed is None
    assert verdict.error == "activation not observable"


# -- activation as a declared capability ------------------------------------------------------


class LoadsJudge(Judge):
    """A third-party activation judge: ``loads: {skills: [...]}`` (another key and shape)."""

    key = "loads"
    summary = "which skills the agent loaded, under another key"
    scores_outcome = False
    scores_activation = True

    def expected_skills(self, value: Any) -> tuple[str, ...]:
        return tuple(value["skills"])

    def check(self, context: JudgeContext) -> Verdict:
        wanted = set(self.expected_skills(context.value))
        got = set(context.attempt.activated or ())
        return Verdict(got == wanted, reason=f"loaded {sorted(got)}")


class LoadsPlugin:
    """Registers :class:`LoadsJudge` the way an installed plugin would."""

    @caliper.hookimpl
    def register_judges(self, register: Any) -> None:
        register(LoadsJudge())


def test_a_judge_declaring_scores_activation_feeds_the_activation_scoreboard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No key is special: ``loads:`` of a plugin registered in-process scores activation."""
    from caliper.results.scoring import score_run
    from caliper.runner import RunOptions, run_spec
    from caliper_fakeagent.harness import FAKE_AGENT, Workspace

    space = Workspace.create(tmp_path)
    space.skill("alpha", "Use for alpha chores.")
    space.skill("beta", "Use for beta chores.")
    spec = space.spec("""\
        skills: [./skills/alpha, ./skills/beta]
        tasks:
          - name: loads alpha
            prompt: "fake: load alpha"
            loads: {skills: [alpha]}
          - name: loads beta instead
            prompt: "fake: load beta"
            loads: {skills: [alpha]}
        """)
    for name, value in space.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("FAKE_AGENT_CLI_PATH", str(FAKE_AGENT))
    monkeypatch.chdir(space.root)
    host = PluginHost(extra_plugins=[LoadsPlugin()])

    report = run_spec(RunOptions(spec_path=spec, k=2, model="fake"), host=host)

    assert report.fatal is None and report.exit_code == 0
    hit, miss = report.results.tasks
    assert (hit.activation_expected, miss.activation_expected) == (["alpha"], ["alpha"])
    assert [a.activation_passed for a in hit.attempts] == [True, True]
    assert [a.activation_passed for a in miss.attempts] == [False, False]
    assert {a.outcome.value for a in hit.attempts + miss.attempts} == {"not_checked"}
    scores = score_run(report.results)
    alpha, beta = sorted(scores.activation_per_skill, key=lambda s: s.skill)
    # alpha: expected in all 4 attempts, loaded in 2; beta: never expected, loaded in 2
    assert (alpha.skill, alpha.expected, alpha.fired, alpha.hits) == ("alpha", 4, 2, 2)
    assert (beta.skill, beta.expected, beta.fired, beta.hits) == ("beta", 0, 2, 0)


def test_activation_bars_are_checked_against_every_activation_key(tmp_path: Path) -> None:
    """``--min-activation TASK=…`` before a run: a task is gateable when any key of its
    belongs to a judge declaring ``scores_activation``, not only ``activates:``."""
    from caliper.commands.gate_options import _activation_keys, spec_task_names

    spec = tmp_path / "bars.eval.yaml"
    spec.write_text(
        "tasks:\n"
        "  - {name: built-in, prompt: p, activates: [a]}\n"
        "  - {name: third-party, prompt: p, loads: {skills: [a]}}\n"
        "  - {name: outcome only, prompt: p, assert: 'pass'}\n",
        encoding="utf-8",
    )
    assert _activation_keys() == ["activates"]  # the built-in judge declares it
    names, activation = spec_task_names(spec, ["activates", "loads"])
    assert names == ["built-in", "third-party", "outcome only"]
    assert activation == ["built-in", "third-party"]
    assert spec_task_names(spec, ["activates"]) == (names, ["built-in"])
