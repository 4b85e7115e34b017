"""Plant a task's ``history:`` as a Gemini CLI saved session and continue it with ``--resume``.

Gemini CLI 0.61.0 records each conversation as JSONL under
``~/.gemini/tmp/<project>/chats/session-<time>-<id8>.jsonl``, where ``<project>`` is the short
name ``~/.gemini/projects.json`` gives the working folder (written there by the CLI on first
use; caliper writes the same entry). The first line is the session header (``sessionId``,
``projectHash`` = SHA-256 of the folder's path, ``startTime``, ``lastUpdated``, ``kind``), each
further line one message record: ``{"type": "user", "content": [{"text": ...}]}`` or
``{"type": "gemini", "content": text, "toolCalls": [...]}``, a tool call carrying its own
``result``. ``gemini --resume latest`` loads the newest session of the folder and sends its
messages to the model before the new prompt (``convertSessionToClientHistory``); the
``stream-json`` output reports only the new turn, so the attempt's transcript never holds the
planted one.

A ``shell:`` turn becomes a ``run_shell_command`` call of the assistant message before it (or
of a message of its own) with the output as its result, failed calls ending with Gemini CLI's
``Exit Code: N`` line.
"""

from __future__ import annotations

import datetime
import hashlib
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
    shell_output_text,
)
from caliper_backend_gemini.skills import gemini_dir

SHELL_TOOL = "run_shell_command"
RESUME_ARGS = ("--resume", "latest")


def _output(turn: ShellTurn) -> str:
    text = shell_output_text(turn)
    return f"Output: {text}\nExit Code: {turn.exit_code}" if turn.failed else f"Output: {text}"


def records(conversation: PlantedConversation, stamp: str) -> list[dict[str, Any]]:
    """The planted turns as Gemini CLI's message records (``stamp``: their timestamp)."""
    out: list[dict[str, Any]] = []
    turns = conversation.turns
    for index, turn in enumerate(turns):
        base = {"id": uuid.uuid4().hex, "timestamp": stamp}
        if isinstance(turn, UserTurn):
            out.append({**base, "type": "user", "content": [{"text": turn.text}]})
            continue
        if isinstance(turn, AssistantTurn):
            out.append({**base, "type": "gemini", "content": turn.text, "thoughts": []})
            continue
        identifier = call_id(conversation, index, f"{SHELL_TOOL}__")
        call = {
            "id": identifier,
            "name": SHELL_TOOL,
            "args": {"command": turn.command},
            "result": [
                {
                    "functionResponse": {
                        "id": identifier,
                        "name": SHELL_TOOL,
                        "response": {"output": _output(turn)},
                    }
                }
            ],
            "status": "error" if turn.failed else "success",
            "timestamp": stamp,
        }
        previous = out[-1] if out else None
        if previous is not None and previous["type"] == "gemini" and index > 0:
            previous.setdefault("toolCalls", []).append(call)
        else:
            out.append({**base, "type": "gemini", "content": "", "toolCalls": [call]})
    return out


def session_lines(
    conversation: PlantedConversation, workdir: Path, now: datetime.datetime
) -> list[str]:
    """Every line of the planted session file for a CLI working in ``workdir``."""
    stamp = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    header = {
        "sessionId": str(uuid.uuid4()),
        "projectHash": hashlib.sha256(str(workdir).encode()).hexdigest(),
        "startTime": stamp,
        "lastUpdated": stamp,
        "kind": "main",
    }
    return [json.dumps(line) for line in (header, *records(conversation, stamp))]


def plant_session(conversation: PlantedConversation, sandbox: AttemptSandbox) -> Path:
    """Write the session (and the folder's ``projects.json`` entry); return the file."""
    folder = gemini_dir(sandbox)
    slug = "caliper-task"
    registry = folder / "projects.json"
    registry.parent.mkdir(parents=True, exist_ok=True)
    registry.write_text(json.dumps({"projects": {str(sandbox.workdir): slug}}), encoding="utf-8")
    project = folder / "tmp" / slug
    (project / "chats").mkdir(parents=True, exist_ok=True)
    (project / ".project_root").write_text(str(sandbox.workdir), encoding="utf-8")
    now = datetime.datetime.now(datetime.timezone.utc)
    name = f"session-{now.strftime('%Y-%m-%dT%H-%M')}-planted.jsonl"
    path = project / "chats" / name
    lines = session_lines(conversation, sandbox.workdir, now)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
