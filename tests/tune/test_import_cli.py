"""``caliper import skill-creator`` through the real console script; the spec it writes
must pass the real ``caliper validate``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

CALIPER = Path(sys.executable).parent / "caliper"


def caliper(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CALIPER), *args],
        cwd=cwd,
        env={**os.environ, "HOME": str(cwd / "home")},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    """A skill-creator skill: SKILL.md, evals/evals.json (upstream schema), input files."""
    folder = tmp_path / "skills" / "pdf"
    (folder / "evals" / "files").mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        "---\nname: pdf\ndescription: Fill and read PDF forms.\n---\nUse scripts/fill.py.\n",
        "utf-8",
    )
    (folder / "evals" / "files" / "form one.pdf").write_bytes(b"%PDF-1.4 form")
    evals = {
        "skill_name": "pdf",
        "evals": [
            {
                "id": 1,
                "prompt": "Fill in form one.pdf with my name, Ada Lovelace.",
                "expected_output": "form one.pdf with the name field filled",
                "files": ["evals/files/form one.pdf"],
                "expectations": [
                    "The name field holds Ada Lovelace",
                    "The skill's fill script was used",
                ],
            },
            {"id": 2, "prompt": "List the form's fields.", "expectations": ["It lists the fields"]},
            {"id": 3, "prompt": "No checks here."},
            {
                "id": 4,
                "prompt": "Odd one",
                "expectations": ["ok"],
                "files": ["evals/files/gone.pdf"],
                "weight": 2,
            },
        ],
        "version": 3,
    }
    (folder / "evals" / "evals.json").write_text(json.dumps(evals, indent=2), "utf-8")
    (tmp_path / "home").mkdir()
    return folder


def trigger_eval(tmp_path: Path) -> Path:
    path = tmp_path / "trigger-eval.json"
    path.write_text(
        json.dumps(
            [
                {
                    "query": "ok so i need this pdf form filled, its in downloads",
                    "should_trigger": True,
                },
                {"query": "write me a fibonacci function", "should_trigger": False},
                {"query": "no verdict"},
            ]
        ),
        "utf-8",
    )
    return path


def test_evals_and_trigger_file_become_one_valid_spec(tmp_path: Path, skill: Path) -> None:
    done = caliper("import", "skill-creator", str(skill), str(trigger_eval(tmp_path)), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "pdf.eval.yaml"
    spec = yaml.safe_load(out.read_text("utf-8"))
    assert spec["skills"] == ["./skills/pdf"]
    first, second, third, fourth, yes, no = spec["tasks"]
    assert first["prompt"] == "Fill in form one.pdf with my name, Ada Lovelace."
    assert first["expect"] == (
        "form one.pdf with the name field filled\nIn particular, all of these hold:\n"
        "- The name field holds Ada Lovelace\n- The skill's fill script was used"
    )
    assert first["activates"] == ["pdf"]
    # relative to the spec's folder, through CALIPER_SPEC_DIR: no absolute path of this machine
    assert first["setup"] == """cp "$CALIPER_SPEC_DIR"/'skills/pdf/evals/files/form one.pdf' ."""
    assert str(tmp_path) not in out.read_text("utf-8")
    assert second["expect"] == "All of these hold:\n- It lists the fields"
    assert "expect" not in third and third["activates"] == ["pdf"]
    assert "setup" not in fourth
    assert (yes["prompt"], yes["activates"]) == (
        "ok so i need this pdf form filled, its in downloads",
        ["pdf"],
    )
    assert no["activates"] == []
    # everything dropped is said
    for fragment in (
        "top-level field 'version'",
        "evals[2]: no expectations or expected_output, so only its activation is checked",
        "evals[3]: field 'weight'",
        "evals[3]: file 'evals/files/gone.pdf' does not exist",
        "[2]: skipped, it needs a string `query` and a true/false `should_trigger`",
    ):
        assert fragment in done.stdout, done.stdout
    checked = caliper("validate", str(out), cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_setup_copies_the_files_after_the_project_moved(tmp_path: Path, skill: Path) -> None:
    """The spec and skill checked out somewhere else (another machine, CI) still work."""
    import shutil

    out = tmp_path / "specs" / "pdf.eval.yaml"
    caliper("import", "skill-creator", str(skill), "-o", str(out), cwd=tmp_path)
    moved = tmp_path / "elsewhere"
    moved.mkdir()
    shutil.move(tmp_path / "skills", moved / "skills")
    shutil.move(tmp_path / "specs", moved / "specs")
    spec = moved / "specs" / "pdf.eval.yaml"
    setup = yaml.safe_load(spec.read_text("utf-8"))["tasks"][0]["setup"]
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "CALIPER_SPEC_DIR": str(spec.parent)}
    subprocess.run(["/bin/sh", "-c", setup], cwd=work, env=env, check=True)
    assert (work / "form one.pdf").read_bytes() == b"%PDF-1.4 form"


def test_a_skill_folder_and_its_own_evals_json_import_each_eval_once(
    tmp_path: Path, skill: Path
) -> None:
    evals = skill / "evals" / "evals.json"
    done = caliper("import", "skill-creator", str(skill), str(evals), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    spec = yaml.safe_load((tmp_path / "pdf.eval.yaml").read_text("utf-8"))
    assert [t["prompt"] for t in spec["tasks"]] == [
        "Fill in form one.pdf with my name, Ada Lovelace.",
        "List the form's fields.",
        "No checks here.",
        "Odd one",
    ]
    assert "Warning:" in done.stderr and "imported once" in done.stderr
    assert str(evals) in done.stderr


def test_output_path_relative_skill_and_trigger_file_with_skill_flag(
    tmp_path: Path, skill: Path
) -> None:
    out = tmp_path / "specs" / "deep" / "triggers.eval.yaml"
    done = caliper(
        "import",
        "skill-creator",
        str(trigger_eval(tmp_path)),
        "--skill",
        str(skill),
        "-o",
        str(out),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    spec = yaml.safe_load(out.read_text("utf-8"))
    assert spec["skills"] == ["../../skills/pdf"]
    assert caliper("validate", str(out), cwd=tmp_path).returncode == 0


def test_trigger_file_without_a_skill_exits_2(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    done = caliper("import", "skill-creator", str(trigger_eval(tmp_path)), cwd=tmp_path)
    assert done.returncode == 2 and "pass --skill DIR" in done.stderr
    assert "Traceback" not in done.stderr


def test_existing_output_needs_force(tmp_path: Path, skill: Path) -> None:
    (tmp_path / "pdf.eval.yaml").write_text("keep me\n", "utf-8")
    done = caliper("import", "skill-creator", str(skill), cwd=tmp_path)
    assert done.returncode == 2 and "--force" in done.stderr
    assert (tmp_path / "pdf.eval.yaml").read_text("utf-8") == "keep me\n"
    assert caliper("import", "skill-creator", str(skill), "--force", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"evals": [', "invalid YAML"),
        ('{"skill_name": "pdf"}', "expected skill-creator's evals.json"),
    ],
)
def test_unreadable_input_says_where(
    tmp_path: Path, skill: Path, content: str, message: str
) -> None:
    bad = skill / "evals" / "evals.json"
    bad.write_text(content, "utf-8")
    done = caliper("import", "skill-creator", str(bad), cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and "evals.json" in done.stderr, (
        done.stderr
    )
    assert "Traceback" not in done.stderr
