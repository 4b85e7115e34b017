"""Plant a task's ``history:`` as a stored Codex session (a rollout) and resume it.

``codex exec`` keeps each session as ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``
and ``codex exec resume <id>`` continues it: the ``response_item`` lines of the rollout are
sent to the model as the conversation so far, before the new prompt (checked against 0.171.0,
whose first line must be a ``session_meta`` naming the id and the working directory).

Turns map to Responses API items as Codex itself stores them: ``user:`` and ``assistant:``
become ``message`` items, a ``shell:`` turn an ``exec_command`` ``function_call`` and its
``function_call_output`` in Codex's own output format. No ``event_msg`` lines are written, so
the planted calls never show up as commands the agent ran (the ``--json`` stream of a resumed
session does not repeat them either).
"""

from __future__ import annotations

import datetime
import json
import uuid
from pathlib import Path
from typing import Any

from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.conversation import (
    AssistantTurn,
    PlantedConversation,
    ShellTurn,
    UserTurn,
    call_id,
)

CODEX_VERSION = "0.171.0"
"""The version written into the planted ``session_meta`` (the pin the format was checked on)."""


def _stamp(moment: datetime.datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def shell_output(turn: ShellTurn) -> str:
    """A shell turn's result the way Codex's ``exec_command`` tool reports one."""
    return f"Process exited with code {turn.exit_code}\nOutput:\n{turn.output}"


def rollout_items(conversation: PlantedConversation) -> list[dict[str, Any]]:
    """The ``response_item`` payloads of the planted conversation, oldest first."""
    items: list[dict[str, Any]] = []
    for index, turn in enumerate(conversation.turns):
        if isinstance(turn, UserTurn):
            content = [{"type": "input_text", "text": turn.text}]
            items.append({"type": "message", "role": "user", "content": content})
        elif isinstance(turn, AssistantTurn):
            content = [{"type": "output_text", "text": turn.text, "annotations": []}]
            items.append({"type": "message", "role": "assistant", "content": content})
        else:
            identifier = call_id(conversation, index, "call_")
            arguments = json.dumps({"cmd": turn.command})
            items.append(
                {
                    "type": "function_call",
                    "name": "exec_command",
                    "arguments": arguments,
                    "call_id": identifier,
                }
            )
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": identifier,
                    "output": shell_output(turn),
                }
            )
    return items


def rollout_lines(
    conversation: PlantedConversation, thread_id: str, cwd: Path, now: datetime.datetime
) -> list[str]:
    """Every line of the planted rollout file."""
    meta = {
        "id": thread_id,
        "timestamp": _stamp(now),
        "cwd": str(cwd),
        "originator": "codex_exec",
        "cli_version": CODEX_VERSION,
        "source": "exec",
    }
    entries = [{"timestamp": _stamp(now), "type": "session_meta", "payload": meta}]
    for offset, item in enumerate(rollout_items(conversation), start=1):
        moment = now + datetime.timedelta(milliseconds=offset)
        entries.append({"timestamp": _stamp(moment), "type": "response_item", "payload": item})
    return [json.dumps(entry, ensure_ascii=False) for entry in entries]


def plant_rollout(
    conversation: PlantedConversation, sandbox: AttemptSandbox, codex_home: Path
) -> str:
    """Write the planted session under ``codex_home/sessions``; its thread id."""
    thread_id = str(uuid.uuid4())
    now = datetime.datetime.now(datetime.timezone.utc)
    folder = codex_home / "sessions" / now.strftime("%Y/%m/%d")
    folder.mkdir(parents=True, exist_ok=True)
    name = f"rollout-{now.strftime('%Y-%m-%dT%H-%M-%S')}-{thread_id}.jsonl"
    lines = rollout_lines(conversation, thread_id, sandbox.workdir.resolve(), now)
    (folder / name).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return thread_id


def resume_argv(argv: list[str], thread_id: str) -> list[str]:
    """``codex exec [flags] resume <id> -``: ``argv`` is the plain attempt command line,
    whose last argument is the ``-`` that reads the prompt from stdin."""
    return [*argv[:-1], "resume", thread_id, argv[-1]]
