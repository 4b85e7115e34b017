"""A crashed attempt whose transcript shows a skill load records that load (it happened),
while scores still leave crashed attempts out of activation; one that shows no load stays
"not observable" (a cut-short transcript is no evidence that nothing fired). Through the real
``caliper`` script with the fake backend."""

from __future__ import annotations

import json

from test_results_support import caliper

from caliper_fakeagent.harness import Workspace


def test_a_crash_after_a_skill_load_keeps_the_load(tmp_path) -> None:
    space = Workspace.create(tmp_path)
    space.skill("helper")
    spec = space.spec("""\
        skills:
          - ./skills/helper
        tasks:
          - name: loads-then-crashes
            prompt: "fake: load helper\\nfake: say working\\nfake: exit 3"
            assert: "assert True"
            activates: [helper]
          - name: crashes-at-once
            prompt: "fake: exit 3"
            assert: "assert True"
            activates: [helper]
        """)
    done = space.run(spec, "--k", "1", "--retries", "0")
    assert done.returncode == 1, done.stdout + done.stderr  # every attempt was unusable
    shown = caliper("report", "demo", "--format", "json", cwd=space.root)
    data = json.loads(shown.stdout)
    attempts = {t["name"]: t["attempts"][0] for t in data["tasks"]}
    crashed = attempts["loads-then-crashes"]
    assert crashed["outcome"] == "infra_error"
    assert crashed["activated"] == ["helper"]
    assert crashed["activation_passed"] is None  # never scored
    assert attempts["crashes-at-once"]["activated"] is None  # nothing seen: not observable
    scores = {t["name"]: t for t in data["scores"]["tasks"]}
    assert scores["loads-then-crashes"]["activation_usable"] == 0
    board = {s["skill"]: s for s in data["scores"]["activation_per_skill"]}
    assert board["helper"]["expected"] == 0 and board["helper"]["fired"] == 0
    text = caliper("report", "demo", "--verbose", cwd=space.root).stdout
    row = next(line for line in text.splitlines() if line.lstrip("│ ").startswith("1 "))
    assert "helper" in row


def test_an_older_file_shows_the_load_its_crashed_transcript_holds() -> None:
    from test_results_support import INFRA, P, run, task

    from caliper.plugin.attempt import Turn
    from caliper.report.html.run_data import run_view

    crashed = task("x", [INFRA, INFRA, P])
    crashed.attempts[0].transcript = [
        Turn(role="assistant", content="let me load it"),
        Turn(role="tool", tool_name="Skill", tool_input={"skill": "my-skill"}, tool_output="ok"),
    ]
    crashed.attempts[1].transcript = [  # read a file of another skill: not a load of my-skill
        Turn(role="tool", tool_name="Read", tool_input={"file_path": "/s/other/SKILL.md"})
    ]
    view = run_view(run([crashed]))
    details = [view["attempts"][a["id"]] for a in view["tasks"][0]["attempts"]]
    assert details[0]["activated"] is None and details[0]["activated_seen"] == ["my-skill"]
    assert details[0]["transcript"][1].get("skill_load") is True
    assert details[1]["activated_seen"] is None  # nothing of a declared skill: not observable
    assert details[2]["activated_seen"] is None  # a finished attempt keeps what it recorded
