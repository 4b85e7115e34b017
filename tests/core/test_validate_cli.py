"""`caliper validate` as a user runs it: several files, odd inputs, JSON, plugins, speed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CALIPER = Path(sys.executable).parent / "caliper"
GOOD = ROOT / "tests" / "specs" / "good"
BAD = ROOT / "tests" / "specs" / "bad"
SKILLS = ROOT / "tests" / "specs" / "skills"


def validate(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [str(CALIPER), "validate", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=full_env,
        timeout=60,
        check=False,
    )


def test_every_file_is_reported_in_one_run() -> None:
    done = validate(
        str(GOOD / "minimal.eval.yaml"),
        str(BAD / "13-task-key-typo.eval.yaml"),
        str(BAD / "21-bad-regex.eval.yaml"),
    )
    assert done.returncode == 2
    assert "minimal.eval.yaml: valid" in done.stdout
    assert "Did you mean 'assert'?" in done.stdout
    assert "is not a valid regular expression" in done.stdout
    assert "2 of 3 specs invalid" in done.stderr


def test_missing_file_and_directory(tmp_path: Path) -> None:
    done = validate(str(tmp_path / "nope.eval.yaml"), str(tmp_path))
    output = done.stdout + done.stderr
    assert done.returncode == 2
    assert "Traceback" not in output
    assert "nope.eval.yaml: no such file" in done.stdout
    assert f"{tmp_path}: is a directory" in done.stdout
    assert "*.eval.yaml" in done.stdout


def test_unreadable_file(tmp_path: Path) -> None:
    spec = tmp_path / "locked.eval.yaml"
    spec.write_text("tasks: []\n")
    spec.chmod(0)
    try:
        if os.access(spec, os.R_OK):  # root reads anything; the message is still exercised
            spec.chmod(0o644)
            spec.write_bytes(b"\xff\xfe")
        done = validate(str(spec))
    finally:
        spec.chmod(0o644)
    assert done.returncode == 2
    assert "Traceback" not in done.stdout + done.stderr
    assert "locked.eval.yaml" in done.stdout


def test_json_format() -> None:
    done = validate(
        "--format",
        "json",
        str(GOOD / "full.eval.yaml"),
        str(BAD / "16-activates-undeclared.eval.yaml"),
    )
    assert done.returncode == 2
    payload = json.loads(done.stdout)
    assert payload["valid"] is False
    good, bad = payload["specs"]
    assert good["valid"] is True
    assert good["skills"] == ["commit-writer", "changelog-writer"]
    assert good["tasks"] == 4
    (problem,) = bad["problems"]
    assert problem["line"] == 7
    assert problem["column"] == 17
    assert problem["field"] == "tasks[0].activates[0]"
    assert "Did you mean 'commit-writer'?" in problem["message"]


def test_expect_without_its_judge_names_the_plugin(tmp_path: Path) -> None:
    spec = tmp_path / "judged.eval.yaml"
    spec.write_text("tasks:\n  - name: t\n    prompt: p\n    expect: it works\n")
    done = validate(str(spec), env={"CALIPER_LOAD_PLUGINS": "assert,activates"})
    assert done.returncode == 2
    assert "judged.eval.yaml:4:5: tasks[0].expect" in done.stdout
    assert "caliper-judge-llm" in done.stdout
    assert "Install it: this is a development install: run scripts/setup" in done.stdout


def test_key_of_an_uninstalled_builtin_is_not_suggested_as_itself(tmp_path: Path) -> None:
    # CALIPER_LOAD_PLUGINS cannot switch a built-in judge off, so leave it out in-process
    from caliper.host.plugins import PluginHost
    from caliper.spec.load import check_spec

    spec = tmp_path / "a.eval.yaml"
    spec.write_text("tasks:\n  - name: t\n    prompt: p\n    assert: assert True\n")
    judges = {k: v for k, v in PluginHost().judges().items() if k != "assert"}
    check = check_spec(spec, judges)
    assert not check.valid
    stdout = "\n".join(problem.message for problem in check.problems)
    assert "unknown task key 'assert'" in stdout
    assert "Did you mean 'assert'" not in stdout
    assert "Its judge is not installed" in stdout


def test_caliper_load_plugins_cannot_switch_off_the_built_in_judges(tmp_path: Path) -> None:
    spec = tmp_path / "a.eval.yaml"
    spec.write_text(
        "tasks:\n  - name: t\n    prompt: p\n    assert: assert True\n    activates: []\n"
    )
    done = validate(str(spec), env={"CALIPER_LOAD_PLUGINS": ""})
    assert done.returncode == 0, done.stdout + done.stderr
    assert "valid" in done.stdout


def test_warnings_do_not_make_a_spec_invalid(tmp_path: Path) -> None:
    skill = tmp_path / "folder-name"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\nname: other-name\ndescription: d\n---\n")
    spec = tmp_path / "w.eval.yaml"
    spec.write_text(
        "skills: [./folder-name]\n"
        "sandbox:\n  extra_path: [./missing-bin]\n"
        "tasks:\n  - name: t\n    prompt: p\n    activates: [other-name]\n"
    )
    done = validate(str(spec))
    assert done.returncode == 0, done.stdout
    assert "warning:" in done.stdout
    assert "differs from the folder name 'folder-name'" in done.stdout
    assert "w.eval.yaml:3:16: sandbox.extra_path[0]" in done.stdout


def test_uncached_git_source_is_a_note_and_never_fetched(tmp_path: Path) -> None:
    spec = tmp_path / "git.eval.yaml"
    spec.write_text(
        "skills:\n"
        f"  - {SKILLS / 'commit-writer'}\n"
        "  - repo: example-owner/example-skills\n"
        "    ref: v1.0\n"
        "tasks:\n  - name: t\n    prompt: p\n    activates: [commit-writer, tdd]\n"
    )
    # An unreachable proxy makes any network use fail instead of hanging.
    done = validate(
        str(spec),
        env={"CALIPER_CACHE_DIR": str(tmp_path / "cache"), "HTTPS_PROXY": "http://127.0.0.1:9"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "note:" in done.stdout
    assert "example-owner/example-skills is not in the cache" in done.stdout
    assert "validate never uses the network" in done.stdout
    assert (
        "could not check that 'tdd' names a declared skill "
        "(example-owner/example-skills is not cached)" in done.stdout
    )
    assert not (tmp_path / "cache" / "skills" / "repos").exists() or not any(
        (tmp_path / "cache" / "skills" / "repos").iterdir()
    )


def test_validate_imports_no_backend() -> None:
    code = (
        "import sys\n"
        "from caliper.cli import main\n"
        f"rc = main(['validate', {str(GOOD / 'full.eval.yaml')!r}])\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('caliper_backend'))\n"
        "print('RC', rc, 'BACKENDS', loaded)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert "RC 0 BACKENDS []" in done.stdout, done.stdout + done.stderr


def test_no_arguments_is_a_usage_error() -> None:
    done = validate()
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
