"""Plant a task's ``history:`` as a pi session file and continue it with ``--session``.

pi stores a conversation as JSONL (session format version 3, the same in 0.74.2 and 1.6.0): a
``session`` header naming the id and the working directory, then ``message`` entries linked by
``parentId`` whose ``message`` is the user, assistant or ``toolResult`` object pi itself keeps.
``pi --session FILE`` loads that file and sends every stored message to the model before the
new prompt; its ``--mode json`` stream then reports only the new messages, so the attempt's
transcript never holds the planted ones.

A ``shell:`` turn becomes an assistant ``toolCall`` of pi's ``bash`` tool and its
``toolResult`` (pi's own ``Command exited with code N`` suffix for a failure). Planted
assistant messages name the provider ``caliper-history``: pi 1.x tries to restore the model
of a session's last assistant message, cannot, says so on stderr and keeps the model the
attempt asked for.
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
from caliper_backend_pi.home import agent_dir
from caliper_backend_pi.mcp import version_tuple

CONVERSATION_MIN_VERSION = (0, 74, 0)
"""The oldest pi whose session format (version 3) was checked (0.74.2 and 1.6.0)."""
SESSION_FORMAT = 3
PLANTED_PROVIDER = "caliper-history"


def can_resume(version: str | None) -> bool:
    """Whether pi ``version`` reads the session format this module writes."""
    parsed = version_tuple(version)
    return parsed is not None and parsed >= CONVERSATION_MIN_VERSION


def refusal(cli: Path | None, version: str | None) -> str:
    """Why this pi cannot start from a planted conversation, and what to do instead."""
    if cli is None:
        return "pi was not found, so caliper cannot tell whether it can resume a session."
    if version_tuple(version) is None:
        return (
            f"caliper could not read the version of the pi at {cli}, so it cannot tell which "
            "session format it reads (history: is supported from pi 0.74 on)."
        )
    return (
        f"pi {version} (at {cli}) is older than 0.74, whose session format caliper writes. "
        "Upgrade pi (`npm install -g @earendil-works/pi-coding-agent`)."
    )


def _tool_result(turn: ShellTurn) -> str:
    if not turn.failed:
        return turn.output
    return f"{turn.output}\n\nCommand exited with code {turn.exit_code}"


def session_messages(conversation: PlantedConversation, millis: int) -> list[dict[str, Any]]:
    """The planted messages, as pi stores them (``millis``: their timestamp)."""
    assistant_meta = {
        "api": "openai-completions",
        "provider": PLANTED_PROVIDER,
        "model": "planted",
        "usage": {
            "input": 0,
            "output": 0,
            "cacheRead": 0,
            "cacheWrite": 0,
            "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
        },
        "timestamp": millis,
    }
    messages: list[dict[str, Any]] = []
    turns = conversation.turns
    for index, turn in enumerate(turns):
        if isinstance(turn, UserTurn):
            content = [{"type": "text", "text": turn.text}]
            messages.append({"role": "user", "content": content, "timestamp": millis})
            continue
        if isinstance(turn, AssistantTurn):
            calls_next = index + 1 < len(turns) and isinstance(turns[index + 1], ShellTurn)
            messages.append(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": turn.text}],
                    "stopReason": "toolUse" if calls_next else "stop",
                    **assistant_meta,
                }
            )
            continue
        identifier = call_id(conversation, index, "call_")
        block = {
            "type": "toolCall",
            "id": identifier,
            "name": "bash",
            "arguments": {"command": turn.command},
        }
        after_text = index > 0 and isinstance(turns[index - 1], AssistantTurn)
        if after_text:  # the text and the call it announced are one assistant message
            messages[-1]["content"].append(block)
        else:
            messages.append(
                {"role": "assistant", "content": [block], "stopReason": "toolUse", **assistant_meta}
            )
        messages.append(
            {
                "role": "toolResult",
                "toolCallId": identifier,
                "toolName": "bash",
                "content": [{"type": "text", "text": _tool_result(turn)}],
                "isError": turn.failed,
                "timestamp": millis,
            }
        )
    return messages


def session_lines(
    conversation: PlantedConversation, session_id: str, cwd: Path, now: datetime.datetime
) -> list[str]:
    """Every line of the planted session file."""
    stamp = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    header = {
        "type": "session",
        "version": SESSION_FORMAT,
        "id": session_id,
        "timestamp": stamp,
        "cwd": str(cwd),
    }
    entries: list[dict[str, Any]] = [header]
    parent: str | None = None
    for message in session_messages(conversation, int(now.timestamp() * 1000)):
        entry_id = uuid.uuid4().hex[:8]
        entries.append(
            {
                "type": "message",
                "id": entry_id,
                "parentId": parent,
                "timestamp": stamp,
                "message": message,
            }
        )
        parent = entry_id
    return [json.dumps(entry, ensure_ascii=False) for entry in entries]


def plant_session(conversation: PlantedConversation, sandbox: AttemptSandbox) -> Path:
    """Write the planted session where pi keeps sessions for the workdir; its path."""
    session_id = str(uuid.uuid4())
    now = datetime.datetime.now(datetime.timezone.utc)
    cwd = sandbox.workdir.resolve()
    folder = agent_dir(sandbox) / "sessions" / f"--{str(cwd).strip('/').replace('/', '-')}--"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = now.isoformat(timespec="milliseconds").replace("+00:00", "Z").replace(":", "-")
    path = folder / f"{stamp.replace('.', '-')}_{session_id}.jsonl"
    lines = session_lines(conversation, session_id, cwd, now)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


def session_argv(argv: list[str], session: Path) -> list[str]:
    """``argv`` with ``--no-session`` replaced by ``--session FILE``."""
    out: list[str] = []
    for arg in argv:
        out += ["--session", str(session)] if arg == "--no-session" else [arg]
    if "--session" not in out:
        out += ["--session", str(session)]
    return out
