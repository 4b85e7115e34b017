"""Skills shared between agents by links: a linked ``SKILL.md`` (or a linked folder) whose
target stays inside the tree the skill comes from is installed with the target's content; a
link that leaves that tree refuses the skill, naming the link; a skill whose ``SKILL.md``
would not be installed is an error; and the name is compared with the folder the entry sits
in, not the link target's. Through the real ``caliper validate`` and ``caliper run``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from caliper.system.skill_tree import copy_tree, scan, source_root_for
from caliper_fakeagent.harness import CALIPER, Workspace


def _skill_text(name: str, marker: str = "BODY-MARKER") -> str:
    return f"---\nname: {name}\ndescription: Plans boards for {name}.\n---\n{marker}\n"


def shared_collection(root: Path) -> Path:
    """A repository that shares ``skills/board`` with a second agent by links:
    ``.gemini/skills/board/SKILL.md`` links to the real file, ``.gemini/skills/notes`` is a
    linked folder."""
    (root / ".git").mkdir(parents=True)
    real = root / "skills" / "board"
    (real / "scripts").mkdir(parents=True)
    (real / "SKILL.md").write_text(_skill_text("board"))
    (real / "scripts" / "go.sh").write_text("echo go\n")
    notes = root / "skills" / "notes"
    notes.mkdir()
    (notes / "SKILL.md").write_text(_skill_text("notes", "NOTES-MARKER"))
    gemini = root / ".gemini" / "skills" / "board"
    gemini.mkdir(parents=True)
    os.symlink("../../../skills/board/SKILL.md", gemini / "SKILL.md")
    os.symlink("../../../skills/board/scripts", gemini / "scripts")  # a folder link
    os.symlink("../../skills/notes", root / ".gemini" / "skills" / "notes")
    return root


def _validate(spec: Path) -> tuple[int, dict]:
    done = subprocess.run(
        [str(CALIPER), "validate", "--format", "json", str(spec)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {}


def _spec(root: Path, skills: list[str], activates: str = "board") -> Path:
    spec = root / "links.eval.yaml"
    listed = "".join(f"  - {s}\n" for s in skills)
    spec.write_text(
        f"skills:\n{listed}tasks:\n  - name: t\n    prompt: p\n    activates: [{activates}]\n"
    )
    return spec


def test_a_linked_skill_file_is_copied_with_its_targets_content(tmp_path: Path) -> None:
    root = shared_collection(tmp_path / "repo")
    folder = root / ".gemini" / "skills" / "board"
    assert source_root_for(folder) == root
    copy = tmp_path / "copy"
    tree = copy_tree(folder, copy)
    assert tree.fatal is None, tree.issues
    assert (copy / "SKILL.md").read_text() == _skill_text("board")
    assert (copy / "scripts" / "go.sh").read_text() == "echo go\n"
    assert not any(p.is_symlink() for p in copy.rglob("*"))


def test_a_link_loop_through_the_source_tree_is_left_out(tmp_path: Path) -> None:
    root = shared_collection(tmp_path / "repo")
    real = root / "skills" / "board"
    # scripts/back -> the .gemini folder, whose scripts link leads back to scripts: a loop
    os.symlink("../../../.gemini/skills/board", real / "scripts" / "back")
    tree = scan(root / ".gemini" / "skills" / "board")
    assert tree.fatal is None
    loops = [i for i in tree.issues if i.kind == "loop"]
    assert loops and all("loop" in i.message for i in loops)
    assert len(tree.files) < 10


def test_validate_accepts_linked_skills_without_a_warning(tmp_path: Path) -> None:
    root = shared_collection(tmp_path / "repo")
    spec = _spec(root, ["./.gemini/skills/board", "./.gemini/skills/notes/SKILL.md"])
    code, payload = _validate(spec)
    assert code == 0, payload
    (result,) = payload["specs"]
    assert result["skills"] == ["board", "notes"]
    assert result["warnings"] == [], result["warnings"]


def test_a_link_leaving_the_source_tree_is_an_error_naming_it(tmp_path: Path) -> None:
    root = shared_collection(tmp_path / "repo")
    elsewhere = tmp_path / "home-secrets"
    elsewhere.mkdir()
    (elsewhere / "id_rsa").write_text("PRIVATE\n")
    os.symlink(elsewhere / "id_rsa", root / "skills" / "board" / "key")
    code, payload = _validate(_spec(root, ["./skills/board"]))
    assert code == 2, payload
    (problem,) = payload["specs"][0]["problems"]
    assert "skills/board/key is a link to" in problem["message"]
    assert "leaves" in problem["message"] and str(root) in problem["message"]


def test_a_skill_file_linked_out_of_the_tree_is_an_error_not_a_warning(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    outside = tmp_path / "outside" / "board"
    outside.mkdir(parents=True)
    (outside / "SKILL.md").write_text(_skill_text("board"))
    folder = root / "skills" / "board"
    folder.mkdir(parents=True)
    os.symlink(outside / "SKILL.md", folder / "SKILL.md")
    code, payload = _validate(_spec(root, ["./skills/board"]))
    assert code == 2, payload
    (problem,) = payload["specs"][0]["problems"]
    assert "SKILL.md is a link to" in problem["message"]


def test_an_ignored_skill_file_is_an_error(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    folder = root / "skills" / "board"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(_skill_text("board"))
    (folder / ".caliperignore").write_text("*.md\n")
    code, payload = _validate(_spec(root, ["./skills/board"]))
    assert code == 2, payload
    (problem,) = payload["specs"][0]["problems"]
    assert "SKILL.md would not be installed" in problem["message"]
    assert ".caliperignore" in problem["message"]


def test_the_name_is_checked_against_the_folder_the_link_sits_in(tmp_path: Path) -> None:
    """A linked SKILL.md whose target sits in a folder of another name is not a mismatch;
    a folder whose name differs from the skill's, reached through a link named like the
    skill, is one."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    commands = root / "commands"
    commands.mkdir(parents=True)
    (commands / "wiki-init.md").write_text(_skill_text("wiki-init"))
    good = root / "skills" / "wiki-init"
    good.mkdir(parents=True)
    os.symlink("../../commands/wiki-init.md", good / "SKILL.md")
    mismatched = root / "skills-init"
    mismatched.mkdir()
    (mismatched / "SKILL.md").write_text(_skill_text("init"))
    os.symlink("../skills-init", root / "skills" / "init")

    code, payload = _validate(_spec(root, ["./skills/wiki-init"], activates="wiki-init"))
    assert code == 0, payload
    assert payload["specs"][0]["warnings"] == []

    code, payload = _validate(_spec(root, ["./skills-init"], activates="init"))
    assert code == 0, payload
    (warning,) = payload["specs"][0]["warnings"]
    assert "'init' differs from the folder name 'skills-init'" in warning["message"]

    code, payload = _validate(_spec(root, ["./skills/init"], activates="init"))
    assert code == 0, payload
    assert payload["specs"][0]["warnings"] == []


def test_a_run_installs_the_linked_skills_content(tmp_path: Path) -> None:
    space = Workspace.create(tmp_path)
    shared_collection(space.root)
    spec = space.spec("""\
        skills:
          - ./.gemini/skills/board
        tasks:
          - name: linked
            prompt: |
              fake: bash cat "$HOME/.fake-agent/skills/board/SKILL.md" > got.txt
              fake: bash cat "$HOME/.fake-agent/skills/board/scripts/go.sh" >> got.txt
            assert: "assert open('got.txt').read().split() == ['---', 'name:', 'board', \
'description:', 'Plans', 'boards', 'for', 'board.', '---', 'BODY-MARKER', 'echo', 'go'], \
open('got.txt').read()"
        """)
    run = space.run(spec, "--k", "1")
    assert run.returncode == 0, run.stderr + run.stdout
    assert [a["outcome"] for a in run.attempts("linked")] == ["pass"]
