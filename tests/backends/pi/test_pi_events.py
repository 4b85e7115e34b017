"""Parser unit tests on RECORDED pi event lines (no pi process is started here).

The files under ``fixtures/`` were recorded from real pi runs against a scripted Chat
Completions server, with machine paths replaced by ``/sandbox`` and ``/opt/pi``:

* ``pi-0.74.2-ok.jsonl``: the pinned 0.7x line (full ``partial`` snapshots in updates);
* ``pi-1.6.0-ok.jsonl`` / ``pi-1.6.0-429.jsonl``: the current 1.x line (deltas only, a
  ``system`` message first, ``agent_settled`` last), which CI does not run live.

The 0.74.2 format is also exercised for real by ``test_pi_live.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from caliper.plugin.attempt import AgentStatus, InstalledSkill, Usage
from caliper.system.process import ProcessResult
from caliper_backend_pi.activation import activated_skills
from caliper_backend_pi.errors import classify_run
from caliper_backend_pi.events import parse_lines, parse_output
from caliper_backend_pi.transcript import build_transcript, final_answer

FIXTURES = Path(__file__).parent / "fixtures"
SANDBOX = Path("/sandbox")
HELLO = InstalledSkill(
    name="hello-skill",
    description="Greets people.",
    skill_dir=SANDBOX / "home/.pi/agent/skills/hello-skill",
)


def recorded(name: str) -> list[str]:
    return (FIXTURES / name).read_text(encoding="utf-8").splitlines()


def exited(stdout: str = "", code: int | None = 0, stderr: str = "") -> ProcessResult:
    return ProcessResult(("pi",), code, stdout, stderr, False, False, 0.5)


@pytest.mark.parametrize("fixture", ["pi-0.74.2-ok.jsonl", "pi-1.6.0-ok.jsonl"])
def test_recorded_successful_run_reads_the_same_in_both_formats(fixture):
    lines = recorded(fixture)
    run = parse_lines(lines)
    assert run.model == "fake/fake-model"
    assert run.usage == Usage(210, 60, 90, 0)  # three assistant messages of 70/20/30/0
    assert final_answer(run) == "HELLO done"
    turns = build_transcript(run)
    assert [(t.role, t.tool_name) for t in turns] == [
        ("user", None),
        ("assistant", None),
        ("tool", "read"),
        ("tool", "bash"),
        ("assistant", None),
    ]
    assert turns[0].content == "say hello"
    assert "Say HELLO." in (turns[2].tool_output or "")
    assert turns[3].is_error is True and turns[3].tool_input == {"command": "echo hi; exit 3"}
    calls = run.tool_calls()
    assert activated_skills(calls, [HELLO], cwd=SANDBOX / "work", home=SANDBOX / "home") == [
        "hello-skill"
    ]
    assert classify_run(exited("\n".join(lines)), run, timeout=60).status is AgentStatus.COMPLETED


def test_recorded_format_markers_differ_as_documented():
    old = parse_lines(recorded("pi-0.74.2-ok.jsonl"))
    new = parse_lines(recorded("pi-1.6.0-ok.jsonl"))
    assert not old.settled and new.settled
    assert new.messages[0]["role"] == "system"
    assert "system" not in [m["role"] for m in old.messages]
    assert any('"partial"' in line for line in recorded("pi-0.74.2-ok.jsonl"))
    assert not any('"partial"' in line for line in recorded("pi-1.6.0-ok.jsonl"))


def test_recorded_1x_rate_limit_is_infra_error_despite_exit_zero():
    lines = recorded("pi-1.6.0-429.jsonl")
    run = parse_lines(lines)
    ending = classify_run(exited("\n".join(lines)), run, timeout=60)
    assert ending.status is AgentStatus.INFRA_ERROR
    assert "429" in (ending.error or "")
    assert final_answer(run) is None
    assert run.usage == Usage(0, 0, 0, 0)


def test_non_json_lines_are_skipped():
    run = parse_output('warning: something\n{"type":"agent_start"}\n[1,2]\n{broken\n')
    assert run.event_count == 1 and run.messages == ()


def test_cut_output_falls_back_to_the_run_summary_in_agent_end():
    """A huge 0.7x stream keeps only its tail; ``agent_end`` still holds every message."""
    lines = recorded("pi-0.74.2-ok.jsonl")
    whole = build_transcript(parse_lines(lines))
    tail = ["[… 123456 bytes of earlier output dropped …]", *lines[len(lines) // 2 :]]
    run = parse_lines(tail)
    assert build_transcript(run) == whole
    assert run.usage == Usage(210, 60, 90, 0)
    assert final_answer(run) == "HELLO done"
    # Without the marker, message_end stays authoritative (no double counting).
    assert len(build_transcript(parse_lines(lines[len(lines) // 2 :]))) < len(whole)
