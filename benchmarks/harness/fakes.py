"""The fake agent both harnesses run: a ``/bin/sh`` ``claude`` that replays a canned stream.

One script serves the attempt (``-p --output-format stream-json``: an init event, a
``Skill`` tool call, a text answer, a result), a judge's question (a verdict, as stream-json
or a json envelope) and ``--version``. A number of seconds in ``delay`` next to it makes it sleep
that long first: a slow agent (the parallel-efficiency benchmark; harnesses do not pass
their environment through to the agent).
"""

from __future__ import annotations

import json
from pathlib import Path

VERSION = "2.1.0 (Claude Code)"


def _events(skill: str) -> list[dict]:
    def assistant(block: dict) -> dict:
        return {
            "type": "assistant",
            "message": {
                "id": "m1",
                "model": "claude-sonnet-4-5",
                "role": "assistant",
                "content": [block],
                "usage": {"input_tokens": 100, "output_tokens": 10},
            },
        }

    use = {"type": "tool_use", "id": "t1", "name": "Skill", "input": {"skill": skill}}
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "Launching skill"}
    return [
        {"type": "system", "subtype": "init", "model": "claude-sonnet-4-5", "session_id": "s1"},
        assistant(use),
        {"type": "user", "message": {"role": "user", "content": [result]}},
        assistant({"type": "text", "text": "HELLO TEAM, done."}),
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": "HELLO TEAM, done.",
            "num_turns": 2,
            "duration_ms": 5,
            "total_cost_usd": 0.0,
            "usage": {"input_tokens": 300, "output_tokens": 60},
        },
    ]


def write_fake_claude(folder: Path, *, skill: str = "shout") -> Path:
    """Write ``folder/bin/claude`` (and its canned stream); returns the ``bin`` folder."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    stream = folder / "stream.jsonl"
    stream.write_text("".join(json.dumps(e) + "\n" for e in _events(skill)))
    judge = folder / "judge.json"
    verdict = json.dumps({"mode": "verdict", "passed": True, "reason": "ok", "reasoning": "ok"})
    judge_stream = folder / "judge-stream.jsonl"
    judge_events = [
        {"type": "system", "subtype": "init", "model": "claude-sonnet-4-5", "session_id": "s2"},
        {
            "type": "assistant",
            "message": {
                "id": "j1",
                "model": "claude-sonnet-4-5",
                "role": "assistant",
                "content": [{"type": "text", "text": verdict}],
                "usage": {"input_tokens": 10, "output_tokens": 5},
            },
        },
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "result": verdict,
            "total_cost_usd": 0.0012,
            "usage": {"input_tokens": 410, "output_tokens": 35},
        },
    ]
    judge_stream.write_text("".join(json.dumps(e) + "\n" for e in judge_events))
    judge.write_text(
        json.dumps(
            {
                "type": "result",
                "subtype": "success",
                "is_error": False,
                "result": verdict,
                "usage": {"input_tokens": 10, "output_tokens": 5},
            }
        )
        + "\n"
    )
    script = bin_dir / "claude"
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "--version" ]; then echo "{VERSION}"; exit 0; fi\n'
        f'[ -f {folder / "delay"} ] && read d < {folder / "delay"} && sleep "$d"\n'
        'case " $* " in *" --dangerously-skip-permissions "*) ;;\n'
        f'  *" stream-json "*) exec cat {judge_stream} ;;\n'
        f"  *) exec cat {judge} ;;\nesac\n"
        'echo "HELLO" > greeting.txt\n'
        f"exec cat {stream}\n"
    )
    script.chmod(0o755)
    return bin_dir
