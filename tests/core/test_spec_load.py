"""load_spec / check_spec: the model they build and the problems they report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import pytest

from caliper.default_plugins.activation_judge import ActivationJudge
from caliper.default_plugins.assert_judge import AssertJudge
from caliper.errors import SpecError
from caliper.plugin.judge import Judge, JudgeContext, ValueProblem, Verdict
from caliper.spec.load import SpecInvalid, check_spec, load_spec
from caliper.spec.model import McpServer, Sandbox

SKILLS = Path(__file__).resolve().parents[1] / "specs" / "skills"
GOOD = Path(__file__).resolve().parents[1] / "specs" / "good"
JUDGES: dict[str, Judge] = {"assert": AssertJudge(), "activates": ActivationJudge()}


class RubricJudge(Judge):
    """A third-party judge owning `rubric:` (a mapping with a list of criteria)."""

    key = "rubric"

    def validate(
        self, value: Any, *, spec_dir: Path, declared_skills: tuple[str, ...]
    ) -> list[ValueProblem]:
        problems = []
        for index, item in enumerate(value.get("criteria", [])):
            if not isinstance(item, str):
                problems.append(ValueProblem("a criterion must be text", ("criteria", index)))
        return problems

    def check(self, context: JudgeContext) -> Verdict:
        return Verdict(passed=True)


class CrashingJudge(Judge):
    key = "boom"

    def validate(
        self, value: Any, *, spec_dir: Path, declared_skills: tuple[str, ...]
    ) -> list[ValueProblem]:
        raise RuntimeError("plugin bug")

    def check(self, context: JudgeContext) -> Verdict:
        return Verdict(passed=None)


def write(tmp_path: Path, text: str, name: str = "demo.eval.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_full_good_spec_becomes_the_model() -> None:
    spec = load_spec(GOOD / "full.eval.yaml", JUDGES)
    assert spec.name == "full"
    assert spec.path == (GOOD / "full.eval.yaml").resolve()
    assert spec.directory == GOOD.resolve()
    assert [s.kind for s in spec.skills] == ["path", "path"]
    assert spec.skills[0].path == "../skills/commit-writer/SKILL.md"
    assert spec.skills[0].line == 3
    assert spec.sandbox == Sandbox(
        extra_path=("./bin",), forbidden_files=(r".*\.eval\.yaml$", r"./\.caliper/.*")
    )
    assert spec.mcp[0] == McpServer(
        name="weather",
        transport="stdio",
        command="python3",
        args=("./servers/weather.py", "--units", "metric"),
        env={"API_TOKEN": "${MCP_API_TOKEN}"},
    )
    assert spec.mcp[1].transport == "http"
    assert spec.mcp[1].headers == {"Authorization": "Bearer ${GDRIVE_TOKEN}"}
    assert spec.mcp[2].url == "${EVENTS_URL}"
    first = spec.tasks[0]
    assert first.name == "Writes a conventional commit message"
    assert first.index == 0
    assert first.setup.startswith("git init")
    assert first.cleanup == "rm -rf .git"
    assert list(first.checks) == ["assert", "activates"]
    assert first.activates == ["commit-writer"]
    assert spec.tasks[1].checks == {"assert": "./assertions/check_report.py"}
    assert spec.tasks[3].activates == []
    assert spec.tasks[1].activates is None


def test_problems_carry_file_line_column_field(tmp_path: Path) -> None:
    path = write(tmp_path, "tasks:\n  - name: a\n    prompt: p\n    activates: [ghost]\n")
    with pytest.raises(SpecInvalid) as caught:
        load_spec(path, JUDGES)
    error = caught.value
    assert isinstance(error, SpecError)
    assert error.exit_code == 2
    (problem,) = error.problems
    assert (problem.file, problem.line, problem.column) == (path, 4, 17)
    assert problem.field == "tasks[0].activates[0]"
    assert "'ghost' is not a declared skill" in problem.message
    assert "none: the spec has no `skills:`" in problem.message
    assert f"{path}:4:17: tasks[0].activates[0]:" in error.render()


def test_all_problems_are_collected_in_order(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        (
            "mcp:\n  x:\n    type: http\n"  # missing url (line 3)
            "tasks:\n"
            "  - name: a\n    prompt: p\n    assert: 'x ='\n"  # does not compile (line 7)
            "  - name: a\n    prompt: q\n    assert: assert True\n"  # duplicate name (line 8)
        ),
    )
    result = check_spec(path, JUDGES)
    assert result.spec is None
    assert [p.line for p in result.problems] == [3, 7, 8]
    assert "duplicate task name 'a'" in result.problems[2].message


def test_third_party_judge_key_and_nested_positions(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        (
            "tasks:\n"
            "  - name: a\n"
            "    prompt: p\n"
            "    rubric:\n"
            "      criteria:\n"
            "        - clear\n"
            "        - 42\n"
        ),
    )
    judges = {**JUDGES, "rubric": RubricJudge()}
    result = check_spec(path, judges)
    (problem,) = result.problems
    assert (problem.line, problem.column, problem.field) == (7, 11, "tasks[0].rubric.criteria[1]")
    assert problem.message == "a criterion must be text"
    # Without the plugin the key is unknown.
    assert "unknown task key 'rubric'" in check_spec(path, JUDGES).problems[0].message


def test_a_crashing_judge_becomes_a_problem(tmp_path: Path) -> None:
    path = write(tmp_path, "tasks:\n  - name: a\n    prompt: p\n    boom: 1\n")
    result = check_spec(path, {"boom": CrashingJudge()})
    (problem,) = result.problems
    assert "failed while checking this value: RuntimeError: plugin bug" in problem.message


def test_judge_that_failed_to_load_is_named(tmp_path: Path) -> None:
    path = write(tmp_path, "tasks:\n  - name: a\n    prompt: p\n    expect: works\n")
    result = check_spec(path, JUDGES, judge_failures={"expect": "ImportError: no module x"})
    assert "installed but failed to load: ImportError: no module x" in result.problems[0].message


def test_path_sources_resolve_names_for_activates(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        (
            f"skills:\n  - {SKILLS / 'commit-writer'}\n"
            f"  - {SKILLS / 'release-notes' / 'SKILL.md'}\n"
            "tasks:\n  - name: a\n    prompt: p\n    activates: [release-notes, commit-writer]\n"
        ),
    )
    result = check_spec(path, JUDGES)
    assert result.valid, result.problems
    assert [s.name for s in result.skills] == ["commit-writer", "release-notes"]
    assert result.notes == []


def test_skills_null_and_empty_mean_a_bare_agent(tmp_path: Path) -> None:
    for text in ("skills:\n", "skills: []\n"):
        path = write(tmp_path, text + "tasks:\n  - name: a\n    prompt: p\n    activates: []\n")
        assert load_spec(path, JUDGES).skills == ()


def test_git_source_fields(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        (
            "skills:\n"
            "  - repo: vercel-labs/agent-skills\n"
            "    ref: a1b2c3d\n"
            "    path: skills/tdd/SKILL.md\n"
            "tasks:\n  - name: a\n    prompt: p\n    assert: assert True\n"
        ),
    )
    result = check_spec(path, JUDGES, cache_dir=tmp_path / "cache")
    assert result.valid
    (source,) = result.spec.skills
    assert (source.kind, source.repo, source.ref, source.path) == (
        "git",
        "vercel-labs/agent-skills",
        "a1b2c3d",
        "skills/tdd/SKILL.md",
    )
    assert source.declared_as == "vercel-labs/agent-skills@a1b2c3d:skills/tdd/SKILL.md"
    assert "not in the cache" in result.notes[0]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{repo: o/n, ref: '-x'}", "must not start with '-'"),
        ("{repo: o/n, ref: 'a..b'}", "is not a valid branch, tag or commit name"),
        ("{repo: o/n, path: /etc/SKILL.md}", "must be a relative path inside the repository"),
        ("{repo: o/n, branch: main}", "unknown key 'branch' in a git source"),
        ("{repo: ''}", "expected a repository, found an empty string"),
        ("42", "expected a path (a string) or a git source"),
    ],
)
def test_bad_git_sources(tmp_path: Path, entry: str, message: str) -> None:
    path = write(
        tmp_path,
        f"skills:\n  - {entry}\ntasks:\n  - name: a\n    prompt: p\n    assert: assert True\n",
    )
    problems = check_spec(path, JUDGES, cache_dir=tmp_path / "c").problems
    assert any(message in p.message for p in problems), problems


@pytest.mark.parametrize(
    ("mcp", "message"),
    [
        ("x: {command: ''}", "expected a command, found an empty string"),
        ("x: {command: a, args: a b}", "expected a list of arguments"),
        ("x: {command: a, env: {1BAD: v}}", "'1BAD' is not a valid environment variable name"),
        ("x: {command: a, env: {K: '${UNCLOSED'}}", "unclosed '${'"),
        (
            "x: {type: http, url: 'https://h', headers: {'Bad Header': v}}",
            "'Bad Header' is not a valid HTTP header name",
        ),
        ("x: {type: http, url: 'https://h/${TOKEN'}", "unclosed '${'"),
        ("x: [command, a]", "expected a server mapping"),
        ("[a, b]", "expected a mapping of server name"),
        ("x: {command: a, cwd: /tmp}", "unknown key 'cwd' in MCP server 'x'"),
    ],
)
def test_bad_mcp_entries(tmp_path: Path, mcp: str, message: str) -> None:
    path = write(
        tmp_path, f"mcp:\n  {mcp}\ntasks:\n  - name: a\n    prompt: p\n    assert: assert True\n"
    )
    problems = check_spec(path, JUDGES).problems
    assert any(message in p.message for p in problems), problems


def test_variable_in_args_is_a_warning(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "mcp:\n  x:\n    command: a\n    args: ['${TOKEN}']\n"
        "tasks:\n  - name: a\n    prompt: p\n    assert: assert True\n",
    )
    result = check_spec(path, JUDGES)
    assert result.valid
    assert "only resolved in env values" in result.warnings[0].message
    assert result.warnings[0].line == 4


@pytest.mark.parametrize("text", ["", "   \n# only a comment\n", "[]", "42", "'text'", "~"])
def test_degenerate_documents(tmp_path: Path, text: str) -> None:
    result = check_spec(write(tmp_path, text), JUDGES)
    assert result.spec is None
    assert len(result.problems) == 1
    assert result.problems[0].line == 1


def test_bom_and_crlf_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "win.eval.yaml"
    path.write_bytes(
        b"\xef\xbb\xbftasks:\r\n  - name: a\r\n    prompt: p\r\n    assert: assert True\r\n"
    )
    assert load_spec(path, JUDGES).tasks[0].name == "a"


def test_task_keys_that_are_not_strings(tmp_path: Path) -> None:
    path = write(
        tmp_path, "tasks:\n  - name: a\n    prompt: p\n    assert: assert True\n    1: x\n"
    )
    (problem,) = check_spec(path, JUDGES).problems
    assert "unknown task key 1" in problem.message
    assert problem.line == 5


def test_unhashed_check_is_the_same_check_without_the_hashes(tmp_path: Path) -> None:
    """``caliper validate`` checks with ``hashed=False``: the same spec, skills and problems,
    only the spec's sha256 and the skills' content hashes left out (issue 20)."""
    import hashlib

    skill = tmp_path / "skills" / "shout"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: shout\ndescription: Greets loudly.\n---\nDo it.\n")
    spec = tmp_path / "s.eval.yaml"
    spec.write_text(
        "skills:\n  - ./skills/shout\ntasks:\n  - name: t\n    prompt: hi\n    activates: [shout]\n"
    )
    hashed = check_spec(spec, JUDGES)
    plain = check_spec(spec, JUDGES, hashed=False)
    assert hashed.spec is not None and plain.spec is not None
    assert hashed.spec.sha256 == hashlib.sha256(spec.read_bytes()).hexdigest()
    assert hashed.skills[0].content_hash
    assert plain.spec.sha256 == "" and plain.skills[0].content_hash is None
    assert [attrs.evolve(s, content_hash=None) for s in hashed.skills] == plain.skills
    assert attrs.evolve(hashed.spec, sha256="") == plain.spec
    bad = tmp_path / "bad.eval.yaml"
    bad.write_text(
        "skills:\n  - ./skills/shout\n  - ./missing\ntasks:\n  - name: b\n    prompt: 3\n"
    )
    problems = check_spec(bad, JUDGES).problems
    assert problems and check_spec(bad, JUDGES, hashed=False).problems == problems
