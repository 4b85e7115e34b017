"""Plant a task's ``history:`` in Hermes' own session store and resume it with ``--resume``.

Hermes keeps sessions in SQLite (``$HERMES_HOME/state.db``). There is no file format to write
and no import that keeps tool calls, so caliper does not touch the database itself: it runs a
few lines with Hermes' own interpreter that call Hermes' ``SessionDB.create_session`` and
``append_message`` (the same calls Hermes makes while it chats), with the assistant's shell
call as a ``terminal`` tool call and its result as a ``tool`` message. ``hermes chat --query …
--resume <id>`` then sends those messages to the model before the prompt (checked against
hermes-agent 0.19.0).

Hermes records the resumed run in the same session, so the exported session starts with the
planted messages; :func:`without_planted` drops them before the transcript is built.
"""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from caliper.plugin import SetupError, run_process
from caliper.plugin.conversation import (
    AssistantTurn,
    PlantedConversation,
    ShellTurn,
    UserTurn,
    call_id,
)
from caliper_backend_hermes.invocation import console_script_python

PLANT_TIMEOUT = 60.0
SHELL_TOOL = "terminal"

_DRIVER = """\
import json, os, sys
sys.path[:] = [p for p in sys.path if p not in ("", os.getcwd())]
from pathlib import Path
from hermes_state import SessionDB
job = json.loads(sys.stdin.read())
db = SessionDB(Path(job["db"]))
db.create_session(job["session_id"], "cli")
for message in job["messages"]:
    db.append_message(job["session_id"], **message)
print(len(job["messages"]))
"""
"""Runs inside Hermes' interpreter: writes the planted messages through Hermes' own API."""


def session_messages(conversation: PlantedConversation) -> list[dict[str, Any]]:
    """The planted messages as ``SessionDB.append_message`` keyword arguments, in order."""
    messages: list[dict[str, Any]] = []
    turns = conversation.turns
    for index, turn in enumerate(turns):
        if isinstance(turn, UserTurn):
            messages.append({"role": "user", "content": turn.text})
        elif isinstance(turn, AssistantTurn):
            messages.append({"role": "assistant", "content": turn.text, "finish_reason": "stop"})
        else:
            identifier = call_id(conversation, index, "call_")
            call = {
                "id": identifier,
                "type": "function",
                "function": {
                    "name": SHELL_TOOL,
                    "arguments": json.dumps({"command": turn.command}),
                },
            }
            after_text = index > 0 and isinstance(turns[index - 1], AssistantTurn)
            if after_text:  # the text and the call it announced are one assistant message
                messages[-1].update(tool_calls=[call], finish_reason="tool_calls")
            else:
                messages.append(
                    {
                        "role": "assistant",
                        "content": "",
                        "tool_calls": [call],
                        "finish_reason": "tool_calls",
                    }
                )
            messages.append(
                {
                    "role": "tool",
                    "content": _tool_result(turn),
                    "tool_call_id": identifier,
                    "tool_name": SHELL_TOOL,
                }
            )
    return messages


def _tool_result(turn: ShellTurn) -> str:
    """The ``terminal`` tool's JSON result: its output and exit code."""
    return json.dumps({"output": turn.output, "exit_code": turn.exit_code, "error": None})


def new_session_id() -> str:
    """A session id in Hermes' own shape (``YYYYMMDD_HHMMSS_<hex>``)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return f"{now:%Y%m%d_%H%M%S}_{uuid.uuid4().hex[:6]}"


def plant_session(
    cli: Path,
    conversation: PlantedConversation,
    hermes_home: Path,
    env: Mapping[str, str],
    cwd: Path,
) -> tuple[str, int]:
    """Write the planted session into ``hermes_home/state.db``; its id and message count."""
    python = console_script_python(cli)
    if python is None:
        raise SetupError(
            f"{cli} is not Hermes' Python console script, so caliper cannot use Hermes' own "
            "session store to plant the task's history:.",
            hint="Point HERMES_CLI_PATH at the `hermes` script inside Hermes' virtualenv.",
        )
    session_id = new_session_id()
    messages = session_messages(conversation)
    job = {"db": str(hermes_home / "state.db"), "session_id": session_id, "messages": messages}
    done = run_process(
        [str(python), "-c", _DRIVER],
        env=dict(env),
        cwd=cwd,
        timeout=PLANT_TIMEOUT,
        stdin_text=json.dumps(job),
    )
    if done.returncode != 0 or done.stdout.strip() != str(len(messages)):
        raise SetupError(
            "Hermes' session store refused the planted conversation: "
            + (done.stderr_tail() or f"exit status {done.returncode}"),
            hint="Check that this Hermes is hermes-agent 0.19 or newer.",
        )
    return session_id, len(messages)


def resume_options(session_id: str) -> list[str]:
    """The ``hermes chat`` options that continue the planted session."""
    return ["--resume", session_id]


def without_planted(
    messages: Sequence[Mapping[str, Any]], planted: int
) -> tuple[Mapping[str, Any], ...]:
    """The exported session's messages minus the ``planted`` ones it starts with."""
    return tuple(messages[planted:])
