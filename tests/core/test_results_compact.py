"""Each text stored once, and capped per turn and per attempt (issue 11 item 15)."""

from __future__ import annotations

import json

from test_results_support import P, run, task

from caliper.plugin.attempt import Turn
from caliper.results import codec
from caliper.results.compact import UNLIMITED, StorageLimits, cut
from caliper_fakeagent.harness import Workspace


def _with_transcript(answer: str, turns: list[Turn]):
    results = run([task("t", [P])])
    record = results.tasks[0].attempts[0]
    record.final_answer = answer
    record.transcript = turns
    return results


def test_the_final_answer_is_written_once_and_read_back_whole():
    answer = "UNIQUE-ANSWER " + "x" * 1000
    results = _with_transcript(
        answer, [Turn("tool", tool_name="Bash", tool_output="ok"), Turn("assistant", answer)]
    )
    text = codec.dumps(results, UNLIMITED)
    assert text.count("UNIQUE-ANSWER") == 1
    data = json.loads(text)["tasks"][0]["attempts"][0]
    assert data["transcript"][1]["content"] is None and data["final_answer_turn"] == 1
    (loaded,) = codec.loads(text).tasks[0].attempts
    assert loaded.transcript[1].content == answer
    assert loaded.final_answer == answer


def test_an_old_file_with_the_answer_twice_still_loads():
    answer = "old style answer"
    results = _with_transcript(answer, [Turn("assistant", answer)])
    data = codec.to_data(results)  # what files written before this change hold
    (loaded,) = codec.from_data(json.loads(json.dumps(data))).tasks[0].attempts
    assert loaded.transcript[0].content == answer and loaded.final_answer == answer


def test_a_long_turn_keeps_its_start_and_end_and_says_how_long_it_was():
    output = "S" * 10 + "m" * 5_000 + "E" * 10
    results = _with_transcript("done", [Turn("tool", tool_name="Read", tool_output=output)])
    data = json.loads(codec.dumps(results, StorageLimits(max_turn_chars=100)))
    kept = data["tasks"][0]["attempts"][0]["transcript"][0]["tool_output"]
    assert kept.startswith("S" * 10) and kept.endswith("E" * 10)
    assert "truncated by caliper: 5,020 characters, the first and last 50 kept" in kept
    assert len(kept) < 200


def test_the_attempt_budget_keeps_the_answer_first_and_every_turn():
    turns = [
        Turn("tool", tool_name="Bash", tool_input={"command": "x" * 400}, tool_output="y" * 400)
    ]
    turns += [Turn("tool", tool_name="Skill", tool_input={"skill": "alpha"}, tool_output="z" * 900)]
    results = _with_transcript("A" * 500, turns)
    data = json.loads(codec.dumps(results, StorageLimits(max_turn_chars=0, max_attempt_chars=1000)))
    attempt = data["tasks"][0]["attempts"][0]
    assert attempt["final_answer"] == "A" * 500
    first, second = attempt["transcript"]
    assert first["tool_input"]["command"] == "x" * 400  # 500 + 400 of the 1,000
    assert "not kept by caliper: 400 characters" in first["tool_output"]
    assert second["tool_name"] == "Skill"  # the turn itself is never dropped
    assert second["tool_input"] == {"skill": "alpha"}  # nor a short text
    assert "not kept by caliper: 900 characters" in second["tool_output"]


def test_cut_leaves_short_text_alone():
    assert cut("short", 100) == "short"
    assert cut("x" * 1000, 0) == "x" * 1000


def test_the_run_flags_cap_a_huge_tool_output(tmp_path):
    """Through the real script with the fake agent: a 300,000-character tool output."""
    space = Workspace.create(tmp_path)
    spec = space.spec(
        """\
        tasks:
          - name: t
            prompt: |
              fake: bash python3 -c "print('B' + 'o' * 300000 + 'E')"
              fake: say done
            assert: "assert True"
        """
    )
    done = space.run(spec, "--k", "1", "--max-turn-chars", "1000")
    assert done.returncode == 0, done.stderr
    assert done.results_path.stat().st_size < 20_000
    (attempt,) = done.attempts("t")
    (bash,) = [t for t in attempt["transcript"] if t["tool_name"] == "Bash"]
    assert bash["tool_output"].startswith("Bo") and bash["tool_output"].rstrip().endswith("oE")
    assert "truncated by caliper: 300,00" in bash["tool_output"]
    default = space.run(spec, "--k", "1")  # the default per-turn limit is 100,000
    (attempt,) = default.attempts("t")
    (bash,) = [t for t in attempt["transcript"] if t["tool_name"] == "Bash"]
    assert 100_000 < len(bash["tool_output"]) < 100_200
