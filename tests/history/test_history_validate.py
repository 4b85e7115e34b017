"""`history:` files checked by the real `caliper validate` script: every problem at its line."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from caliper.plugin.conversation import AssistantTurn, ShellTurn, UserTurn
from caliper.spec.conversation import MAX_CONVERSATION_BYTES, load_conversation

CALIPER = Path(sys.executable).parent / "caliper"

GOOD_HISTORY = """\
turns:
  - user: Read notes.txt please.
  - shell:
      command: cat notes.txt
      output: |
        step 1
  - assistant: It says step 1.
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def spec_with(folder: Path, history: str = "history.yaml") -> Path:
    return write(
        folder,
        "demo.eval.yaml",
        f"""\
        tasks:
          - name: t
            history: {history}
            prompt: Go on.
            assert: "assert True"
        """,
    )


def validate(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CALIPER_LOAD_PLUGINS": "assert,activates"}
    return subprocess.run(
        [str(CALIPER), "validate", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
    )


def problems(tmp_path: Path, history_text: str) -> list[dict[str, object]]:
    write(tmp_path, "history.yaml", history_text)
    spec = spec_with(tmp_path)
    done = validate(str(spec), "--format", "json", cwd=tmp_path)
    data = json.loads(done.stdout)
    assert (done.returncode == 0) == data["valid"], done.stderr
    return data["specs"][0]["problems"]


def test_a_good_history_is_valid_and_loaded_in_order(tmp_path):
    write(tmp_path, "history.yaml", GOOD_HISTORY)
    spec = spec_with(tmp_path)
    done = validate(str(spec), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "valid: 1 task" in done.stdout

    history, reason, found = load_conversation("history.yaml", tmp_path)
    assert reason is None and found == []
    assert history is not None
    assert history.turns == (
        UserTurn("Read notes.txt please."),
        ShellTurn("cat notes.txt", "step 1\n", 0),
        AssistantTurn("It says step 1."),
    )
    assert history.sha256 == hashlib.sha256((tmp_path / "history.yaml").read_bytes()).hexdigest()
    assert history.path == (tmp_path / "history.yaml").resolve()


def test_every_problem_in_the_file_has_its_own_line(tmp_path):
    found = problems(
        tmp_path,
        """\
        turns:
          - user: hi
          - shel: {command: ls}
          - shell: {output: x}
          - shell: {command: ls, output: 3, exit_code: 300, extra: 1}
          - assistant: ""
          - [a, list]
        """,
    )
    by_field = {(p["field"], p["line"]): p["message"] for p in found}
    assert all(p["file"].endswith("history.yaml") for p in found), found
    assert "Did you mean 'shell'?" in by_field[("turns[1].shel", 3)]
    assert "needs `command:`" in by_field[("turns[2].shell", 4)]
    assert "expected the command's output" in by_field[("turns[3].shell.output", 5)]
    assert "exit status from 0 to 255" in by_field[("turns[3].shell.exit_code", 5)]
    assert "unknown key 'extra'" in by_field[("turns[3].shell.extra", 5)]
    assert "empty string" in by_field[("turns[4].assistant", 6)]
    assert "exactly one key" in by_field[("turns[5]", 7)]
    assert len(found) == 7, found


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("turns:\n  - assistant: hello\n  - user: x\n  - assistant: y\n", 2, "first turn must be"),
        ("turns:\n  - user: a\n  - user: b\n  - assistant: c\n", 3, "two `user:` turns"),
        ("turns:\n  - user: a\n  - assistant: b\n  - user: c\n", 4, "must end with"),
        ("turns: []\n", 1, "non-empty list"),
        ("", 1, "history file is empty"),
        ("- user: a\n", 1, "expected a mapping with `turns:`"),
        ("turns:\n  - user: a\nturn: 1\n", 3, "unknown key 'turn'"),
        ("turns:\n  - user: [unclosed\n", 3, "invalid YAML"),
    ],
)
def test_shape_and_order_problems(tmp_path, text, line, words):
    found = problems(tmp_path, text)
    assert found, "expected a problem"
    assert any(words in p["message"] and p["line"] == line for p in found), found


def test_the_text_output_names_file_line_and_field(tmp_path):
    write(tmp_path, "h/plan.yaml", "turns:\n  - user: a\n  - shell: {output: b}\n")
    spec = spec_with(tmp_path, "h/plan.yaml")
    done = validate(str(spec.name), cwd=tmp_path)
    assert done.returncode == 2
    assert "h/plan.yaml:3:12: turns[1].shell: a shell turn needs `command:`" in done.stdout
    assert "Traceback" not in done.stderr


def test_unreadable_history_files_are_reported_at_the_spec_line(tmp_path):
    (tmp_path / "folder.yaml").mkdir()
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "big.yaml").write_bytes(b"#" * (MAX_CONVERSATION_BYTES + 1))
    (tmp_path / "binary.yaml").write_bytes(b"turns:\x00\n")
    cases = {
        "missing.yaml": "no such file",
        "folder.yaml": "is a directory",
        "pipe.yaml": "not a regular file",
        "big.yaml": "at most 1048576 bytes",
    }
    for name, words in cases.items():
        spec = spec_with(tmp_path, name)
        done = validate(str(spec), "--format", "json", cwd=tmp_path)
        assert done.returncode == 2, (name, done.stdout)
        (problem,) = json.loads(done.stdout)["specs"][0]["problems"]
        assert problem["file"].endswith("demo.eval.yaml"), problem
        assert (problem["line"], problem["field"]) == (3, "tasks[0].history"), problem
        assert words in problem["message"], problem
    spec = spec_with(tmp_path, "binary.yaml")
    done = validate(str(spec), cwd=tmp_path)
    assert done.returncode == 2 and "binary.yaml" in done.stdout and "binary file" in done.stdout


def test_history_must_be_a_path_string(tmp_path):
    write(
        tmp_path,
        "demo.eval.yaml",
        """\
        tasks:
          - name: t
            history: [a.yaml]
            prompt: Go on.
            assert: "assert True"
        """,
    )
    done = validate("demo.eval.yaml", cwd=tmp_path)
    assert done.returncode == 2
    assert "demo.eval.yaml:3:14: tasks[0].history: expected the path of a history file" in (
        done.stdout
    )
