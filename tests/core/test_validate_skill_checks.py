"""`caliper validate` on skills that look fine but misbehave once installed.

Each test runs the real ``caliper`` console script on a spec written into a temp folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

CALIPER = Path(sys.executable).parent / "caliper"


def validate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``caliper validate ARGS`` in ``cwd`` (JSON output when asked)."""
    return subprocess.run(
        [str(CALIPER), "validate", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=dict(os.environ),
        timeout=60,
        check=False,
    )


def write_skill(folder: Path, name: str, extra: str = "", body: str = "Steps.\n") -> Path:
    """``folder/SKILL.md`` with ``name``, a description and ``extra`` frontmatter lines."""
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: Does {name} things.\n{extra}---\n{body}"
    (folder / "SKILL.md").write_text(text, encoding="utf-8")
    return folder / "SKILL.md"


def write_spec(path: Path, skills: list[str], activates: list[str] | None = None) -> Path:
    """A one-task spec declaring ``skills`` (paths as written)."""
    lines = ["skills:"] + [f"  - {s}" for s in skills]
    lines += ["tasks:", "  - name: one", "    prompt: Do it.", "    assert: assert True"]
    if activates is not None:
        lines.append(f"    activates: [{', '.join(activates)}]")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def warnings_of(done: subprocess.CompletedProcess[str]) -> list[dict]:
    """The warnings of the single spec in a ``--format json`` answer."""
    payload = json.loads(done.stdout)
    return payload["specs"][0]["warnings"]


def test_validate_from_the_skills_own_folder_compares_the_real_folder_name(
    tmp_path: Path,
) -> None:
    """Issue 11 item 20: run inside the skill folder, the folder name is not ''."""
    skill = tmp_path / "greeter"
    write_skill(skill, "greeter")
    write_spec(skill / "greeter.eval.yaml", ["./SKILL.md"])
    done = validate("greeter.eval.yaml", "--format", "json", cwd=skill)
    assert done.returncode == 0, done.stdout + done.stderr
    assert warnings_of(done) == [], done.stdout
    text = validate("greeter.eval.yaml", cwd=skill)
    assert "differs from the folder name" not in text.stdout, text.stdout


def test_a_real_name_mismatch_is_still_reported_from_inside_the_folder(tmp_path: Path) -> None:
    """The fix must not silence a genuine mismatch."""
    skill = tmp_path / "greeter"
    write_skill(skill, "hello-there")
    write_spec(skill / "greeter.eval.yaml", ["./SKILL.md"])
    done = validate("greeter.eval.yaml", "--format", "json", cwd=skill)
    messages = [w["message"] for w in warnings_of(done)]
    assert any("differs from the folder name 'greeter'" in m for m in messages), messages


def test_a_model_hidden_skill_is_warned_about_with_its_file(tmp_path: Path) -> None:
    """Issue 11 item 3: ``disable-model-invocation: true`` hides the skill from the model."""
    skill_file = write_skill(tmp_path / "locked", "locked", "disable-model-invocation: true\n")
    write_spec(tmp_path / "s.eval.yaml", ["./locked"])
    done = validate("s.eval.yaml", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    (warning,) = warnings_of(done)
    assert (tmp_path / warning["file"]).resolve() == skill_file.resolve()
    assert (warning["line"], warning["column"]) == (4, 1)
    assert "'locked' is hidden from the model" in warning["message"]
    text = validate("s.eval.yaml", cwd=tmp_path).stdout
    assert "locked/SKILL.md:4:1: frontmatter.disable-model-invocation:" in text, text


def test_activates_naming_a_model_hidden_skill_is_a_warning_at_validate(tmp_path: Path) -> None:
    """validate knows no engine: only some agents hide such a skill, so it warns."""
    write_skill(tmp_path / "locked", "locked", "disable-model-invocation: true\n")
    write_skill(tmp_path / "open", "open")
    spec = write_spec(
        tmp_path / "s.eval.yaml", ["./locked", "./open"], activates=["open", "locked"]
    )
    done = validate("s.eval.yaml", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    (warning,) = [w for w in warnings_of(done) if w["field"].startswith("tasks")]
    assert (tmp_path / warning["file"]).resolve() == spec.resolve()
    assert warning["field"] == "tasks[0].activates[1]"
    assert (warning["line"], warning["column"]) == (8, 23)
    assert "disable-model-invocation" in warning["message"]
    assert "can never pass" in warning["message"] and "refuses" in warning["message"]
    text = validate("s.eval.yaml", cwd=tmp_path).stdout
    assert "s.eval.yaml:8:23: tasks[0].activates[1]: 'locked' says" in text, text


def _hidden_run(tmp_path: Path, hides: bool) -> subprocess.CompletedProcess[str]:
    from caliper_fakeagent.harness import Workspace

    space = Workspace.create(tmp_path)
    write_skill(space.root / "locked", "locked", "disable-model-invocation: true\n")
    spec = space.root / "s.eval.yaml"
    spec.write_text(
        "skills:\n  - ./locked\ntasks:\n  - name: t\n    prompt: 'fake: load locked'\n"
        "    activates: [locked]\n"
    )
    env = space.env(FAKE_HIDES_DISABLED="1" if hides else "0")
    return subprocess.run(
        [str(CALIPER), "run", str(spec), "--model", "fake", "--k", "1"],
        cwd=space.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_run_refuses_it_where_the_backend_hides_the_skill(tmp_path: Path) -> None:
    done = _hidden_run(tmp_path, hides=True)
    assert done.returncode == 2, done.stderr + done.stdout
    assert "tasks[0].activates[0]: 'locked' cannot be activated with fake" in done.stderr
    assert "could never pass" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / ".caliper" / "results").exists()


def test_a_run_measures_it_where_the_backend_lists_the_skill(tmp_path: Path) -> None:
    done = _hidden_run(tmp_path, hides=False)
    assert done.returncode == 0, done.stderr + done.stdout


def test_each_backend_declares_whether_it_hides_such_skills() -> None:
    """Read from each pinned CLI's skill loader: Claude Code and pi filter the skills with
    ``disable-model-invocation: true`` out of the model's list; Codex 0.171 (which has its own
    ``policy.allow_implicit_invocation``) and Hermes 0.19 never read the field."""
    from caliper_backend_claude.backend import ClaudeCodeBackend
    from caliper_backend_codex.backend import CodexBackend
    from caliper_backend_hermes.backend import HermesBackend
    from caliper_backend_pi.backend import PiBackend

    assert ClaudeCodeBackend().hides_model_disabled_skills() is True
    assert PiBackend().hides_model_disabled_skills() is True
    assert CodexBackend().hides_model_disabled_skills() is False
    assert HermesBackend().hides_model_disabled_skills() is False


def test_false_or_absent_disable_model_invocation_is_fine(tmp_path: Path) -> None:
    write_skill(tmp_path / "free", "free", "disable-model-invocation: false\n")
    write_spec(tmp_path / "s.eval.yaml", ["./free"], activates=["free"])
    done = validate("s.eval.yaml", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0 and warnings_of(done) == [], done.stdout


def test_nested_skill_md_files_are_warned_about_with_their_path(tmp_path: Path) -> None:
    """Issue 11 item 2: each nested SKILL.md is named, with what caliper does with it."""
    write_skill(tmp_path / "parent", "parent")
    nested = write_skill(tmp_path / "parent" / "tools" / "child", "child")
    write_spec(tmp_path / "s.eval.yaml", ["./parent"])
    done = validate("s.eval.yaml", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    (warning,) = warnings_of(done)
    assert (tmp_path / warning["file"]).resolve() == nested.resolve()
    assert "not a separate skill" in warning["message"]
    assert "declare it in `skills:`" in warning["message"]


def _many_skills(root: Path, count: int) -> list[str]:
    entries = []
    for index in range(count):
        name = f"many-{index:04d}"
        folder = root / name
        folder.mkdir(parents=True)
        description = (f"Case {index:04d} " + "x" * 250)[:250]
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\nBody.\n", encoding="utf-8"
        )
        entries.append(f"./{name}")
    return entries


def test_a_neighbourhood_past_a_backends_listing_budget_is_warned_about(tmp_path: Path) -> None:
    """Issue 11 item 4: per backend, with its figure (claude 8,000; codex about 21,700)."""
    write_spec(tmp_path / "s.eval.yaml", _many_skills(tmp_path, 40))
    done = validate("s.eval.yaml", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout
    messages = [w["message"] for w in warnings_of(done) if w["field"] == "skills"]
    assert len(messages) == 1, messages
    assert "claude-code shows in full about 8,000" in messages[0]
    assert "listed by name only" in messages[0]
    write_spec(
        tmp_path / "s.eval.yaml", [f"./more/{e[2:]}" for e in _many_skills(tmp_path / "more", 90)]
    )
    messages = [
        w["message"] for w in warnings_of(validate("s.eval.yaml", "--format", "json", cwd=tmp_path))
    ]
    assert any("codex shows about 21,700" in m for m in messages), messages
    assert not any(m.startswith("the 90 skills' listing") and "pi shows" in m for m in messages)


def test_a_small_neighbourhood_loads_no_backend_and_gets_no_listing_warning(tmp_path: Path) -> None:
    write_spec(tmp_path / "s.eval.yaml", _many_skills(tmp_path, 5))
    code = (
        "import sys\nfrom caliper.cli import main\n"
        "rc = main(['validate', 's.eval.yaml'])\n"
        "print('BACKENDS', sorted(m for m in sys.modules if m.startswith('caliper_backend')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert "BACKENDS []" in done.stdout, done.stdout + done.stderr
    assert "shows about" not in done.stdout
