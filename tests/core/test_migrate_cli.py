"""``caliper migrate`` and the earlier tool's files, through the real console script.

The fixtures in ``predecessor/project`` are in the real formats of caliper-eval 0.21.0 (see
``predecessor/README.md``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from test_results_support import caliper

FIXTURE = Path(__file__).parent / "predecessor" / "project"
SPEC = "commit-writer.eval.yaml"


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(FIXTURE, project)
    (project / ".git").mkdir()  # the results root stops here, as in a real checkout
    return project


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_validate_points_a_list_history_at_migrate(tmp_path):
    project = _project(tmp_path)
    out = caliper("validate", SPEC, cwd=project)
    assert out.returncode == 2
    lines = [line for line in out.stdout.splitlines() if "history/entered.yaml" in line]
    assert lines and all("caliper migrate" in line and "earlier" in line for line in lines)


def test_dry_run_shows_the_diff_and_writes_nothing(tmp_path):
    project = _project(tmp_path)
    before = _tree(project)
    out = caliper("migrate", SPEC, "--dry-run", cwd=project)
    assert out.returncode == 0, out.stderr
    assert "-    id: entered" in out.stdout
    assert "+turns:" in out.stdout and "+  - user: |-" in out.stdout
    assert "-    - run: git diff --cached --stat" in out.stdout
    assert "Nothing was written (--dry-run)." in out.stdout
    assert _tree(project) == before


def test_migrate_converts_and_keeps_every_original(tmp_path):
    project = _project(tmp_path)
    before = _tree(project)
    out = caliper("migrate", SPEC, cwd=project)
    assert out.returncode == 0, out.stderr
    # every original is kept, byte for byte, beside the migrated file
    for name in (SPEC, "history/entered.yaml", "history/plain.yaml"):
        assert (project / f"{name}.orig").read_bytes() == before[name]
    # the migrated spec validates, and keeps its comments
    spec_text = (project / SPEC).read_text()
    assert "# the skill under test" in spec_text and "id: entered" not in spec_text
    valid = caliper("validate", SPEC, cwd=project)
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert "warning" not in valid.stdout + valid.stderr
    # the history: the same conversation, in `turns:`, `/commit-writer` expanded from SKILL.md
    turns = yaml.safe_load((project / "history/entered.yaml").read_text())["turns"]
    assert [next(iter(t)) for t in turns] == ["user", "assistant", "shell", "shell", "assistant"]
    opening = turns[0]["user"]
    assert opening.startswith(
        "<command-name>/commit-writer</command-name>\n<command-args>--scope api</command-args>\n"
    )
    assert "1. Read the staged diff with `git diff --cached`." in opening
    assert "description:" not in opening  # the instructions, not the frontmatter
    assert opening.endswith("ARGUMENTS: --scope api")
    assert turns[2]["shell"] == {
        "command": "git diff --cached --stat",
        "output": "a.txt | 1 +\n1 file changed, 1 insertion(+)\n",
    }
    assert turns[3]["shell"] == {"command": "git status --short", "output": "A  a.txt"}
    # `/tmp` names no declared skill: plain text, as the earlier tool left it
    plain = yaml.safe_load((project / "history/plain.yaml").read_text())["turns"]
    assert plain[0] == {"user": "/tmp is full again, can you look?"}
    assert "/tmp, which names no declared skill" in out.stdout
    # a second migrate finds nothing to do and writes nothing
    after = _tree(project)
    again = caliper("migrate", SPEC, cwd=project)
    assert again.returncode == 0 and "Nothing to migrate" in again.stdout
    assert _tree(project) == after


def test_a_second_migration_keeps_the_first_backup(tmp_path):
    project = _project(tmp_path)
    (project / f"{SPEC}.orig").write_text("an older backup\n")
    assert caliper("migrate", SPEC, cwd=project).returncode == 0
    assert (project / f"{SPEC}.orig").read_text() == "an older backup\n"
    assert (project / f"{SPEC}.orig.2").read_bytes() == (FIXTURE / SPEC).read_bytes()


def test_old_spec_keys_are_rewritten_in_the_text(tmp_path):
    project = _project(tmp_path)
    (project / "old.eval.yaml").write_text(
        "# older still\n"
        "skill:\n  path: ./commit-writer/SKILL.md\n  backend: codex\n"
        "judge:\n  backend: claude-code\n"
        "tasks:\n"
        "  - id: first\n    name: one\n    prompt: hi\n    activates: [commit-writer]\n"
        "  - name: two\n    prompt: |\n      hello\n    activates: []\n    task_id: |\n"
        "      x\n"
    )
    out = caliper("migrate", "old.eval.yaml", cwd=project)
    assert out.returncode == 0, out.stderr
    text = (project / "old.eval.yaml").read_text()
    assert text.startswith("# older still\nskills:\n  - ./commit-writer/SKILL.md\ntasks:\n")
    assert yaml.safe_load(text)["tasks"] == [
        {"name": "one", "prompt": "hi", "activates": ["commit-writer"]},
        {"name": "two", "prompt": "hello\n", "activates": []},
    ]
    assert caliper("validate", "old.eval.yaml", cwd=project).returncode == 0


def test_what_cannot_be_converted_is_listed_and_exits_1(tmp_path):
    project = _project(tmp_path)
    (project / "history/ends.yaml").write_text("- user: hi\n- assistant: hello\n- user: bye\n")
    (project / "ends.eval.yaml").write_text(
        "tasks:\n  - name: t\n    history: history/ends.yaml\n    prompt: p\n    activates: []\n"
    )
    out = caliper("migrate", "ends.eval.yaml", cwd=project)
    assert out.returncode == 1
    assert "To finish by hand" in out.stderr and "ends with a user turn" in out.stderr
    assert (project / "history/ends.yaml").read_text().startswith("- user: hi")
    assert not (project / "history/ends.yaml.orig").exists()


def test_not_a_spec_exits_2(tmp_path):
    (tmp_path / "x.eval.yaml").write_text("- a\n- b\n")
    out = caliper("migrate", "x.eval.yaml", cwd=tmp_path)
    assert out.returncode == 2 and "not a spec" in out.stderr
    assert "Traceback" not in out.stderr


def test_list_report_compare_read_the_earlier_tools_runs(tmp_path):
    project = _project(tmp_path)
    listed = caliper("list", "commit-writer", cwd=project)
    assert listed.returncode == 0, listed.stderr
    assert "unreadable" not in listed.stdout + listed.stderr
    rows = [line for line in listed.stdout.splitlines() if "2026-03-01T" in line]
    # 5 of 6 usable attempts passed in the full run (2/3, 3/3), 3 of 5 without the skill
    assert "83.3%" in rows[1] and "claude-code:claude-sonnet-4-6" in rows[1]
    assert "33.3%" in rows[0] and "commit-writer" in rows[0]
    report = caliper("report", "commit-writer/2026-03-01T10-00-00Z", cwd=project)
    assert report.returncode == 0, report.stderr
    assert "Saved by the earlier caliper-eval" in report.stdout
    assert "Writes a conventional commit message" in report.stdout
    assert "AssertionError: subject line is 81 chars" in report.stdout
    compared = caliper(
        "compare",
        "commit-writer/2026-03-01T10-00-00Z",
        "commit-writer/2026-03-01T11-30-00Z",
        cwd=project,
    )
    assert compared.returncode == 0, compared.stderr
    assert "83.3% → 33.3%" in compared.stdout


def test_building_on_an_earlier_run_is_refused_naming_what_to_do(tmp_path):
    project = _project(tmp_path)
    out = caliper("retry", "commit-writer", cwd=project)
    assert out.returncode == 2
    assert "saved by the earlier caliper-eval" in out.stderr
    assert "caliper migrate" in out.stderr and "Traceback" not in out.stderr


def test_a_write_that_fails_leaves_the_file_unchanged_and_says_so(tmp_path, monkeypatch):
    """The backup is written first and the file replaced atomically: a failing write loses
    nothing, and the message is about the migration, not about saving results."""
    import pytest

    from caliper.commands import migrate
    from caliper.errors import CaliperError
    from caliper.results import store
    from caliper.spec.migrate import plan_migration

    project = _project(tmp_path)
    plan = plan_migration(project / SPEC)
    real = store.write_atomic

    def failing(path, text):
        if path.name == "entered.yaml":
            raise store.ResultsWriteError("x") from OSError(28, "No space left on device")
        real(path, text)

    monkeypatch.setattr(store, "write_atomic", failing)
    with pytest.raises(CaliperError) as caught:
        migrate._apply(plan.changes)
    assert "Could not migrate" in str(caught.value) and "unchanged" in str(caught.value)
    assert "results" not in str(caught.value)
    entered = project / "history" / "entered.yaml"
    assert entered.read_bytes() == (FIXTURE / "history" / "entered.yaml").read_bytes()


def test_compare_of_an_earlier_run_with_a_new_one_warns_about_the_tool(tmp_path):
    import os

    import attrs
    from test_results_support import P, run, task

    from caliper.results.store import save_run

    project = _project(tmp_path)
    new = run(
        [task("Writes a conventional commit message", [P, P, P])], run_id="2026-12-01T10-00-00Z"
    )
    new = attrs.evolve(new, meta=attrs.evolve(new.meta, spec_name="commit-writer"))
    previous = os.getcwd()
    os.chdir(project)
    try:
        save_run(new, spec_path=project / SPEC)
    finally:
        os.chdir(previous)
    out = caliper(
        "compare",
        "commit-writer/2026-03-01T10-00-00Z",
        "commit-writer/2026-12-01T10-00-00Z",
        cwd=project,
    )
    assert out.returncode == 0, out.stderr
    assert "66.7% → 100.0%" in out.stdout
    assert "A was run by the earlier caliper-eval" in " ".join(out.stdout.split())


def test_validate_warns_that_a_slash_turn_is_plain_text_here(tmp_path):
    """A hand-converted history keeping `/commit-writer` would silently lose the expansion."""
    project = _project(tmp_path)
    (project / "history" / "entered.yaml").write_text(
        "turns:\n  - user: /commit-writer --scope api\n  - assistant: Ready.\n"
    )
    (project / "history" / "plain.yaml").write_text(
        "turns:\n  - user: /tmp is full\n  - assistant: I see.\n"
    )
    (project / SPEC).write_text((project / SPEC).read_text().replace("    id: entered\n", ""))
    out = caliper("validate", SPEC, cwd=project)
    assert out.returncode == 0, out.stdout + out.stderr
    text = " ".join((out.stdout + out.stderr).split())
    assert text.count("warning") == 1  # once per file, and not for /tmp (no such skill)
    assert "turn 1 of history/entered.yaml is `/commit-writer`" in text
    assert "plain text" in text


def test_a_folder_migrates_every_spec_and_a_shared_history_once(tmp_path):
    project = _project(tmp_path)
    (project / "second.eval.yaml").write_text(
        "skills: [./commit-writer/SKILL.md]\n"
        "tasks:\n  - name: again\n    history: history/entered.yaml\n    prompt: go\n"
        "    activates: [commit-writer]\n"
    )
    out = caliper("migrate", ".", cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("Migrated history/entered.yaml") == 1
    assert not (project / "history" / "entered.yaml.orig.2").exists()
    for spec in (SPEC, "second.eval.yaml"):
        assert caliper("validate", spec, cwd=project).returncode == 0, spec
    empty = tmp_path / "empty"
    empty.mkdir()
    refused = caliper("migrate", str(empty), cwd=tmp_path)
    assert refused.returncode == 2 and "no *.eval.yaml" in refused.stderr


def test_a_spec_it_cannot_edit_safely_is_left_as_it_is(tmp_path):
    text = '{"tasks": [{"id": 1, "name": "x", "prompt": "p", "activates": []}]}\n'
    (tmp_path / "flow.eval.yaml").write_text(text)
    out = caliper("migrate", "flow.eval.yaml", cwd=tmp_path)
    assert out.returncode == 1
    assert "delete `id:`" in out.stderr and "Note:" not in out.stdout
    assert (tmp_path / "flow.eval.yaml").read_text() == text
    assert not (tmp_path / "flow.eval.yaml.orig").exists()
