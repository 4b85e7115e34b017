"""Parsing ``codex exec --json`` output (real 0.171.0 event shapes)."""

from __future__ import annotations

import json

from caliper.plugin.attempt import Usage
from caliper_backend_codex.events import normalise_usage, parse_events


def lines(*events: dict) -> str:
    return "\n".join(json.dumps(e) for e in events) + "\n"


COMMAND = "/bin/bash -lc 'cat /sb/home/.codex/skills/hello/SKILL.md'"
STREAM = lines(
    {"type": "thread.started", "thread_id": "01a2-thread"},
    {"type": "turn.started"},
    {"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": "hmm"}},
    {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message",
     "text": "Reading."}},
    {"type": "item.started", "item": {"id": "item_2", "type": "command_execution",
     "command": COMMAND, "aggregated_output": "", "exit_code": None, "status": "in_progress"}},
    {"type": "item.completed", "item": {"id": "item_2", "type": "command_execution",
     "command": COMMAND, "aggregated_output": "---\nname: hello\n", "exit_code": 0,
     "status": "completed"}},
    {"type": "item.completed", "item": {"id": "item_3", "type": "command_execution",
     "command": "/bin/bash -lc 'exit 3'", "aggregated_output": "", "exit_code": 3,
     "status": "failed"}},
    {"type": "item.completed", "item": {"id": "item_4", "type": "file_change",
     "changes": [{"path": "/sb/work/notes.txt", "kind": "add"}], "status": "completed"}},
    {"type": "item.completed", "item": {"id": "item_5", "type": "mcp_tool_call", "server": "demo",
     "tool": "echo", "arguments": {"text": "v2"}, "result": {"content": [{"type": "text",
     "text": "echo: v2"}], "structured_content": None}, "error": None, "status": "completed"}},
    {"type": "item.completed", "item": {"id": "item_6", "type": "error",
     "message": "Model metadata for `x` not found."}},
    {"type": "item.completed", "item": {"id": "item_7", "type": "agent_message", "text": "Done."}},
    {"type": "turn.completed", "usage": {"input_tokens": 300, "cached_input_tokens": 120,
     "cache_write_input_tokens": 0, "output_tokens": 60, "reasoning_output_tokens": 15}},
)  # fmt: skip


def test_transcript_in_order() -> None:
    run = parse_events(STREAM)
    assert run.thread_id == "01a2-thread"
    assert [(t.role, t.tool_name) for t in run.turns] == [
        ("assistant", None),
        ("tool", "shell"),
        ("tool", "shell"),
        ("tool", "apply_patch"),
        ("tool", "mcp__demo__echo"),
        ("assistant", None),
    ]
    shell = run.turns[1]
    assert shell.tool_input == {"command": COMMAND}
    assert shell.tool_output == "---\nname: hello\n"
    assert shell.is_error is False
    assert run.turns[2].is_error is True
    mcp = run.turns[4]
    assert mcp.tool_input == {"text": "v2"}
    assert mcp.tool_output == "echo: v2"
    assert mcp.is_error is False
    assert run.final_answer == "Done."
    assert run.commands == [COMMAND, "/bin/bash -lc 'exit 3'"]
    assert run.notices == ["Model metadata for `x` not found."]
    assert run.completed and run.failure is None


def test_cached_tokens_are_taken_out_of_input() -> None:
    assert parse_events(STREAM).usage == Usage(
        input_tokens=180, output_tokens=60, cache_read_tokens=120, cache_creation_tokens=0
    )
    usage = normalise_usage({"input_tokens": 50, "cached_input_tokens": 80, "output_tokens": 1})
    assert usage.input_tokens == 0 and usage.cache_read_tokens == 80


def test_failure_tail() -> None:
    run = parse_events(
        lines(
            {"type": "thread.started", "thread_id": "t"},
            {"type": "turn.started"},
            {"type": "error", "message": "Reconnecting... 1/2 (unexpected status 429)"},
            {"type": "error", "message": "exceeded retry limit, last status: 429"},
            {"type": "turn.failed", "error": {"message": "exceeded retry limit, last status: 429"}},
        )
    )
    assert not run.completed
    assert run.failure == "exceeded retry limit, last status: 429"
    assert len(run.errors) == 2
    assert run.usage is None


def test_unfinished_command_is_kept_and_garbage_counted() -> None:
    run = parse_events(
        lines(
            {"type": "item.started", "item": {"id": "item_0", "type": "command_execution",
             "command": "sleep 100", "aggregated_output": "", "exit_code": None,
             "status": "in_progress"}},
        ) + "not json\n[1]\n"
    )  # fmt: skip
    assert run.commands == ["sleep 100"]
    assert run.turns[0].is_error is None
    assert run.bad_lines == 2
    assert run.usable


def test_empty_output_is_unusable() -> None:
    run = parse_events("")
    assert not run.usable and run.turns == [] and run.final_answer is None


def test_an_item_of_the_wrong_json_type_is_described_not_a_crash() -> None:
    from caliper.plugin.attempt import AgentStatus
    from caliper.system.process import ProcessResult
    from caliper_backend_codex.errors import classify

    stream = lines(
        {"type": "thread.started", "thread_id": "t"},
        {"type": "item.completed", "item": {"id": "i1", "type": ["agent_message"], "text": "x"}},
        {"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": "ok"}},
        {"type": "turn.completed", "usage": {"input_tokens": 1, "output_tokens": 1}},
    )
    run = parse_events(stream)  # used to raise TypeError: unhashable type: 'list'
    assert run.final_answer == "ok"
    assert run.unreadable and '["agent_message"]' in run.unreadable[0]
    process = ProcessResult(("codex",), 0, stream, "", False, False, 1.0)
    ending = classify(process, run, timeout=10)
    assert ending.status is AgentStatus.INFRA_ERROR
    assert "codex sent output caliper could not read" in ending.error
    assert "'type' is not a string" in ending.error
