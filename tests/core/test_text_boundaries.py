"""Text from outside (spec files, agent output) that could break saving or the terminal,
through the real ``caliper`` script with the fake agent."""

from __future__ import annotations

import json
import os
import pty
import subprocess

from caliper.system.textsafe import printable, well_formed
from caliper_fakeagent.harness import CALIPER, Workspace


def test_well_formed_replaces_only_lone_surrogates():
    assert well_formed("a\ud800b\udfff") == "a\ufffdb\ufffd"
    assert well_formed("\ud83d\ude00") == "\U0001f600"  # a proper pair is one character
    assert well_formed("plain é") == "plain é"


def test_a_lone_surrogate_in_a_task_name_and_prompt_is_saved_not_a_crash(tmp_path):
    space = Workspace.create(tmp_path)
    spec = space.spec(
        """\
        tasks:
          - name: "bad \\ud800 name"
            prompt: "fake: say hi \\ud800 there"
            assert: "assert True"
        """
    )
    done = space.run(spec, "--k", "1")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    json.loads(done.results_path.read_bytes().decode("utf-8"))  # strict UTF-8, valid JSON
    (task,) = done.results["tasks"]
    assert task["name"] == "bad \ufffd name"
    assert task["attempts"][0]["final_answer"] == "hi \ufffd there"


EVIL_SPEC = """\
tasks:
  - name: "evil \\e]0;pwned\\a title \\e[2J clear"
    prompt: |
      fake: stderr boom \\x1b]0;stderr-pwned\\x07 and \\x1b[2J wiped
      fake: exit 3
    assert: "assert True"
  - name: "fails \\e[31m red"
    prompt: "fake: say x"
    assert: "assert False, 'reason \\\\x1b]0;reason-pwned\\\\x07 here \\\\x1b[2J'"
"""
ESCAPES = ("\x1b]0;", "\x1b[2J", "\x1b[31m", "\x07")


def _no_escapes(text: str) -> None:
    for escape in ESCAPES:
        assert escape not in text, f"{escape!r} reached the terminal:\n{text!r}"


def test_printable_removes_terminal_controls():
    assert printable("a\x1b]0;pwned\x07b\x1b[2Jc\x1b[31md\x9b2Je\tf\ng\r") == "abcde\tf\ng"


def test_escapes_in_names_stderr_and_reasons_never_reach_the_terminal(tmp_path):
    space = Workspace.create(tmp_path)
    spec = space.spec(EVIL_SPEC)
    done = space.run(spec, "--k", "1")
    assert done.returncode == 0, done.stderr
    (crashed,) = done.attempts("evil \x1b]0;pwned\x07 title \x1b[2J clear")  # saved as it was
    assert "\x1b]0;stderr-pwned" in crashed["error"]
    _no_escapes(done.stdout + done.stderr)
    assert "boom" in done.stdout and "evil" in done.stdout and "reason" in done.stdout
    for args in (["report", str(spec), "--verbose"], ["list", str(spec)]):
        shown = subprocess.run(
            [str(CALIPER), *args], cwd=tmp_path, env=space.env(), capture_output=True, text=True
        )
        assert shown.returncode == 0, shown.stderr
        _no_escapes(shown.stdout + shown.stderr)


def test_the_error_printer_strips_escapes(tmp_path):
    """A setup error (the agent says it is not logged in) is printed by the CLI's error
    printer; its text comes from the agent."""
    space = Workspace.create(tmp_path)
    spec = space.spec(
        """\
        tasks:
          - name: t
            prompt: "fake: auth-fail login \\x1b]0;pwned\\x07 now \\x1b[2J please"
            assert: "assert True"
        """
    )
    done = space.run(spec, "--k", "1")
    assert done.returncode == 3, done.stderr
    assert "login" in done.stderr and "please" in done.stderr
    _no_escapes(done.stderr)


def test_progress_on_a_terminal_strips_escapes(tmp_path):
    """Progress is drawn only when stderr is a terminal: run caliper on a pseudo-terminal."""
    space = Workspace.create(tmp_path)
    spec = space.spec(EVIL_SPEC)
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [str(CALIPER), "run", str(spec), "--model", "fake", "--k", "2"],
        cwd=tmp_path,
        env=space.env(COLUMNS="120", TERM="xterm"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=terminal,
    )
    os.close(terminal)
    chunks = []
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    assert process.wait(timeout=60) == 0
    drawn = b"".join(chunks).decode("utf-8", "replace")
    assert "attempts" in drawn  # the progress table was drawn
    for escape in ("\x1b]0;", "\x1b[2J", "\x07"):
        assert escape not in drawn, f"{escape!r} reached the terminal"
