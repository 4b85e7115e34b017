"""Plant a task's ``history:`` as a stored Claude Code session and resume it.

Claude Code keeps each conversation as JSONL under ``<config dir>/projects/<cwd slug>/<id>.jsonl``
(the config dir is ``<sandbox home>/.claude`` here, see ``home``) and ``claude -p --resume
<id>`` continues it: every stored ``user``/``assistant`` entry, linked by ``parentUuid``, is
sent to the model as a real message before the new prompt. The slug is the absolute working
directory with every character that is not a letter or digit replaced by ``-`` (checked
against 2.1.332; longer than 200 characters it gets a hash suffix this module does not
reproduce, so such a working directory is refused).

A shell turn becomes a ``Bash`` ``tool_use`` block and its ``tool_result``, as Claude Code
writes them; an assistant text directly before a shell call shares its message, as in a real
session. ``--resume`` does not echo the stored turns on stdout, so the attempt's transcript
holds only what the agent did after the prompt.
"""

from __future__ import annotations

import datetime
import json
import re
import uuid
from pathlib import Path
from typing import Any

from caliper.plugin import SetupError
from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.conversation import (
    AssistantTurn,
    PlantedConversation,
    ShellTurn,
    UserTurn,
    call_id,
    shell_output_text,
)

MAX_SLUG = 200
CLAUDE_VERSION = "2.1.332"
"""The version written into planted entries (the pinned one the format was checked against)."""


def project_slug(workdir: Path) -> str:
    """The folder name Claude Code uses for sessions started in ``workdir``."""
    slug = re.sub(r"[^a-zA-Z0-9]", "-", str(workdir))
    if len(slug) > MAX_SLUG:
        raise SetupError(
            f"The attempt's working directory {workdir} is longer than {MAX_SLUG} characters, "
            "so the planted conversation cannot be stored where Claude Code looks for it.",
            hint="Point CALIPER_TMPDIR at a shorter folder.",
        )
    return slug


def _tool_result(turn: ShellTurn) -> str:
    text = shell_output_text(turn)
    return f"Exit code {turn.exit_code}\n{text}" if turn.failed else text


def _assistant_message(message_id: str, block: dict[str, Any], stop: str) -> dict[str, Any]:
    """An assistant ``message`` holding one content ``block``, ending with ``stop``."""
    return {
        "id": message_id,
        "type": "message",
        "role": "assistant",
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }


class _Session:
    """The entries of one planted session as they are written: each linked to the one before
    it by ``parentUuid`` and stamped a moment after it."""

    def __init__(self, session_id: str, cwd: Path) -> None:
        """Start an empty session ``session_id`` run in ``cwd``, stamped from now."""
        self.stamp = datetime.datetime.now(datetime.timezone.utc)
        self.common = {
            "isSidechain": False,
            "userType": "external",
            "entrypoint": "sdk-cli",
            "cwd": str(cwd),
            "sessionId": session_id,
            "version": CLAUDE_VERSION,
        }
        self.entries: list[dict[str, Any]] = []
        self.parent: str | None = None

    def add(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        """Append a ``kind`` (``user`` or ``assistant``) entry carrying ``message``."""
        entry_id = str(uuid.uuid4())
        when = self.stamp + datetime.timedelta(milliseconds=len(self.entries))
        self.entries.append(
            {
                "parentUuid": self.parent,
                **self.common,
                "type": kind,
                "message": message,
                "uuid": entry_id,
                "timestamp": when.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                **extra,
            }
        )
        self.parent = entry_id

    def add_shell(
        self, conversation: PlantedConversation, index: int, turn: ShellTurn, message_id: str
    ) -> None:
        """Append a shell turn: a ``Bash`` ``tool_use`` in the assistant message
        ``message_id``, then the user entry holding its ``tool_result``."""
        tool_id = call_id(conversation, index, "toolu_")
        block = {
            "type": "tool_use",
            "id": tool_id,
            "name": "Bash",
            "input": {"command": turn.command},
        }
        self.add("assistant", _assistant_message(message_id, block, "tool_use"))
        result = {
            "tool_use_id": tool_id,
            "type": "tool_result",
            "content": _tool_result(turn),
            "is_error": turn.failed,
        }
        self.add(
            "user",
            {"role": "user", "content": [result]},
            toolUseResult={
                "stdout": turn.output,
                "stderr": "",
                "interrupted": False,
                "isImage": False,
            },
        )


def session_entries(
    conversation: PlantedConversation, session_id: str, cwd: Path
) -> list[dict[str, Any]]:
    """The JSONL entries of the planted session, oldest first."""
    session = _Session(session_id, cwd)
    turns = conversation.turns
    message_id = ""
    for index, turn in enumerate(turns):
        if isinstance(turn, UserTurn):
            session.add("user", {"role": "user", "content": turn.text})
        elif isinstance(turn, AssistantTurn):
            message_id = f"msg_hist{conversation.sha256[:12]}n{index}"
            calls_next = index + 1 < len(turns) and isinstance(turns[index + 1], ShellTurn)
            stop = "tool_use" if calls_next else "end_turn"
            block = {"type": "text", "text": turn.text}
            session.add("assistant", _assistant_message(message_id, block, stop))
        else:
            after_text = index > 0 and isinstance(turns[index - 1], AssistantTurn)
            if not after_text:
                message_id = f"msg_hist{conversation.sha256[:12]}n{index}"
            session.add_shell(conversation, index, turn, message_id)
    return session.entries


def plant_session(conversation: PlantedConversation, sandbox: AttemptSandbox) -> str:
    """Write the planted session into the sandbox's Claude config dir; its session id."""
    session_id = str(uuid.uuid4())
    cwd = sandbox.workdir.resolve()  # the CLI sees its cwd with symlinks resolved
    folder = sandbox.home / ".claude" / "projects" / project_slug(cwd)
    folder.mkdir(parents=True, exist_ok=True)
    entries = session_entries(conversation, session_id, cwd)
    text = "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in entries)
    (folder / f"{session_id}.jsonl").write_text(text, encoding="utf-8")
    return session_id


def resume_argv(session_id: str) -> list[str]:
    """The arguments that make ``claude -p`` continue the planted session."""
    return ["--resume", session_id]
