"""The LLM judge's prompt rendering and verdict parsing (pure functions)."""

from __future__ import annotations

from caliper.plugin.attempt import Turn
from caliper.plugin.judge import LLM_JUDGE_MARKER
from caliper_judge_llm.prompt import PROMPT_VERSION, build_prompt, render_transcript, truncate
from caliper_judge_llm.verdict import parse_verdict


def test_verdict_inside_fences_and_prose():
    text = 'Sure.\n```json\n{"passed": true, "reasoning": "file written"}\n```\nDone.'
    verdict = parse_verdict(text)
    assert verdict is not None and verdict.passed is True and verdict.reasoning == "file written"


def test_last_verdict_wins_and_non_verdict_objects_are_ignored():
    text = '{"note": 1} then {"passed": false, "reasoning": "a"} and {"passed": "true"}'
    verdict = parse_verdict(text)
    assert verdict is not None and verdict.passed is True


def test_prose_without_json_is_no_verdict():
    assert parse_verdict("The attempt passed: yes, definitely true.") is None
    assert parse_verdict("") is None
    assert parse_verdict('{"passed": "maybe"}') is None


def test_truncation_is_marked():
    cut = truncate("x" * 10_000, 1_000)
    assert len(cut) < 1_100 and "characters truncated" in cut


def test_transcript_includes_tool_inputs_outputs_and_marks_truncation():
    turns = [
        Turn(role="assistant", content="Let me look."),
        Turn(role="tool", tool_name="Bash", tool_input={"command": "ls"}, tool_output="a.txt"),
        Turn(role="tool", tool_name="Read", tool_input={"path": "big"}, tool_output="y" * 20_000),
    ]
    text = render_transcript(turns)
    assert "TOOL CALL Bash" in text and '"command": "ls"' in text and "result: a.txt" in text
    assert "characters truncated" in text


def test_prompt_carries_marker_version_expectation_and_answer():
    prompt = build_prompt(
        task_prompt="Do X", expectation="X is done", turns=[], final_answer="I did X"
    )
    assert LLM_JUDGE_MARKER in prompt and PROMPT_VERSION in prompt
    assert "X is done" in prompt and "I did X" in prompt and '"passed"' in prompt
