"""The conformance kit's baseline check: ``caliper run SPEC --baseline`` on a real agent CLI.

One run of two tasks, both arms in one session. The scripted model writes ``out.txt`` for the
first task only when the skill under test is advertised to it (its description carries a
marker), so the control arm fails the task's ``assert:`` and the skill is reported as helping,
with significance. The second task is one every agent manages with or without the skill, so
it shows no detectable difference. The arms' saved attempts are read back to check that they
were interleaved (started in a mixed order, pair by pair) rather than one arm after the other.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from caliper.testing.conformance_kit import ConformanceKit, tool_call_data
from caliper.testing.script import ToolCall

MARKER = "BASELINE-SKILL-5120"
"""In the skill's description (first in it: Hermes shows only its first 57 characters)."""

SKILL_NAME = "file-writer"
NEEDED_PROMPT = "Make the file for me."
ANYWAY_PROMPT = "Write out.txt yourself."
K = 5
"""Attempts per task and arm: 5 of 5 against 0 of 5 is significant at 5 % after Holm over the
two tasks (Fisher's p = 2/252, adjusted 0.016); 4 of 4 against 0 of 4 is not (p = 2/70,
adjusted 0.057)."""


def write_skill(kit: ConformanceKit) -> str:
    """Write the skill under test into the kit's project; return its spec entry."""
    folder = kit.project / "skills" / SKILL_NAME
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {SKILL_NAME}\ndescription: {MARKER} writes out.txt when asked to make "
        "the file.\n---\nWrite the word yes into out.txt with the shell.\n",
        encoding="utf-8",
    )
    return f"./skills/{SKILL_NAME}/SKILL.md"


def baseline_script(kit: ConformanceKit, load: ToolCall, shell: ToolCall) -> dict[str, Any]:
    """The scripted model: it knows how to make the file only when the skill is offered."""
    write = {"tool_calls": [tool_call_data(shell)]}
    done = {"text": "Wrote out.txt."}
    return kit.script(
        rules=[
            {
                "when": {"user_text_contains": NEEDED_PROMPT, "request_contains": MARKER},
                "turns": [{"tool_calls": [tool_call_data(load)]}, write, done],
            },
            {
                "when": {"user_text_contains": NEEDED_PROMPT},
                "turns": [{"text": "I do not know which file you mean."}],
            },
            {
                "when": {"user_text_contains": ANYWAY_PROMPT},
                "turns": [write, {"text": "Done."}],
            },
        ]
    )


def check_baseline_pair(kit: ConformanceKit, load: ToolCall, shell: ToolCall) -> None:
    """Run the baseline pair on the kit's CLI and check the verdicts and the interleaving."""
    server = kit.server(baseline_script(kit, load, shell))
    check = "from pathlib import Path; assert Path('out.txt').read_text().strip() == 'yes'"
    spec = kit.spec(
        [
            {"name": "needs the skill", "prompt": NEEDED_PROMPT, "assert": check},
            {"name": "manages anyway", "prompt": ANYWAY_PROMPT, "assert": check},
        ],
        skills=[write_skill(kit)],
    )
    run = kit.run(spec, server, "--baseline", "--k", str(K), "--workers", "2", "--format", "json")
    assert run.returncode == 0, run.describe()
    (pair,) = json.loads(run.stdout)["pairs"]
    assert pair["left_out"] == [SKILL_NAME], pair
    assert pair["task_verdicts"] == {
        "needs the skill": "helps",
        "manages anyway": "no detectable difference",
    }, pair
    assert pair["verdict"] == "helps", pair
    assert pair["comparison"]["p_adjusted"] < 0.05, pair
    assert pair["sensitivity"] is not None, pair

    arms = _saved_arms(spec.parent / ".caliper" / "results" / spec.name.split(".")[0])
    needed = {arm: _task(run_data, "needs the skill") for arm, run_data in arms.items()}
    assert [a["outcome"] for a in needed["full"]] == ["pass"] * K, needed["full"]
    assert [a["outcome"] for a in needed["control"]] == ["task_fail"] * K, needed["control"]
    assert all(a["activated"] == [SKILL_NAME] for a in needed["full"]), needed["full"]
    assert not any(a["activated"] for a in needed["control"]), needed["control"]
    started = sorted(
        (a["started_at"], arm)
        for arm, run_data in arms.items()
        for task in run_data["tasks"]
        for a in task["attempts"]
    )
    first_half = {arm for _, arm in started[: len(started) // 2]}
    assert first_half == {"full", "control"}, f"arms not interleaved: {started}"


def _saved_arms(folder: Path) -> dict[str, dict[str, Any]]:
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
    arms = {r["meta"]["baseline"]["arm"]: r for r in runs if (r.get("meta") or {}).get("baseline")}
    assert set(arms) == {"full", "control"}, f"saved runs in {folder}: {sorted(arms)}"
    return arms


def _task(run_data: dict[str, Any], name: str) -> list[dict[str, Any]]:
    (task,) = [t for t in run_data["tasks"] if t["name"] == name]
    return list(task["attempts"])
