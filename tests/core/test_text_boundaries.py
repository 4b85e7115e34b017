"""Text from outside (spec files, agent output) that could break saving or the terminal,
through the real ``caliper`` script with the fake agent."""

from __future__ import annotations

import json

from caliper.textsafe import well_formed
from caliper_fakeagent.harness import Workspace


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
