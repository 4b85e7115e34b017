"""Reading ``opencode run --format json`` output: one JSON event per line.

* ``text`` — ``part.text``: what the model wrote;
* ``tool_use`` — ``part.tool``, ``part.state`` (``status``, ``input``, ``output`` or ``error``);
  a completed ``skill`` call is how the model loads a skill;
* ``step_finish`` — ``part.tokens``: ``input`` (already without cache reads), ``output``,
  ``cache.read``, ``cache.write``;
* ``error`` — ``error.data.statusCode`` (a ``ProviderAuthError`` or a status in the core's
  table, :func:`caliper.plugin.agent_ending.status_for_http`: the login or model is wrong; anything
  else: the provider failed).

The status is decided from these structures and the exit code, never from the answer's words.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from caliper.plugin import ProcessResult
from caliper.plugin.agent_ending import status_for_http
from caliper.plugin.attempt import AgentStatus, AttemptResult, Turn, Usage

SKILL_TOOL = "skill"


def parse_events(stdout: str) -> list[dict[str, Any]]:
    """The JSON objects of ``stdout`` (other lines, e.g. warnings, are skipped)."""
    events = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
    return events


def step_usage(tokens: dict[str, Any]) -> Usage:
    """One ``step_finish``'s tokens as caliper's four disjoint numbers."""
    cache = tokens.get("cache") or {}
    return Usage(
        input_tokens=tokens.get("input"),
        output_tokens=tokens.get("output"),
        cache_read_tokens=cache.get("read"),
        cache_creation_tokens=cache.get("write"),
    )


def tool_turn(part: dict[str, Any]) -> Turn:
    """A ``tool_use`` part as a transcript turn."""
    state = part.get("state") or {}
    failed = state.get("status") == "error"
    output = state.get("error") if failed else state.get("output")
    return Turn(
        role="tool",
        tool_name=part.get("tool"),
        tool_input=state.get("input"),
        tool_output=None if output is None else str(output),
        is_error=failed,
    )


def error_status(error: dict[str, Any]) -> AgentStatus:
    """SETUP_ERROR for a refused login (or any status the core's table says no retry fixes),
    INFRA_ERROR for every other provider failure."""
    data = error.get("data") or {}
    if error.get("name") == "ProviderAuthError":
        return AgentStatus.SETUP_ERROR
    return status_for_http(data.get("statusCode"))


def read_attempt(
    done: ProcessResult, *, installed: Sequence[str], model: str | None
) -> AttemptResult:
    """The attempt as opencode reported it."""
    events = parse_events(done.stdout)
    turns: list[Turn] = []
    usage: Usage | None = None
    activated: list[str] = []
    failure: dict[str, Any] | None = None
    for event in events:
        part = event.get("part") or {}
        kind = event.get("type")
        if kind == "text" and part.get("text"):
            turns.append(Turn(role="assistant", content=part["text"]))
        elif kind == "tool_use":
            turn = tool_turn(part)
            turns.append(turn)
            name = (turn.tool_input or {}).get("name") if turn.tool_name == SKILL_TOOL else None
            if not turn.is_error and name in installed and name not in activated:
                activated.append(name)
        elif kind == "step_finish" and part.get("tokens"):
            step = step_usage(part["tokens"])
            usage = step if usage is None else usage + step
        elif kind == "error":
            failure = event.get("error") or {}
    answers = [t.content for t in turns if t.role == "assistant"]
    common = {
        "final_answer": answers[-1] if answers else None,
        "transcript": turns,
        "activated": activated if installed else None,
        "usage": usage,
        "model": model,
        "exit_code": done.returncode,
        "duration_seconds": done.duration_seconds,
    }
    if failure is not None:
        data = failure.get("data") or {}
        message = data.get("message") or failure.get("name") or "opencode reported an error"
        status_code = data.get("statusCode")
        error = f"opencode: {message}" + (f" (HTTP {status_code})" if status_code else "")
        return AttemptResult(error_status(failure), error=error, **common)
    if done.returncode != 0 or not events:
        error = f"opencode exited with {done.returncode}: {done.stderr_tail() or 'no output'}"
        return AttemptResult(AgentStatus.INFRA_ERROR, error=error, **common)
    return AttemptResult(AgentStatus.COMPLETED, **common)
