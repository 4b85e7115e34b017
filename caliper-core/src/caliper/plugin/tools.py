"""One tool vocabulary across backends, and the tool calls of a transcript in its terms.

Specs name tools by kind (``shell``, ``read``, ``write``, ``edit``, ``skill``) or as
``mcp:SERVER/TOOL``; each backend says which of its own tool names are each kind
(:meth:`caliper.plugin.backend.Backend.tool_vocabulary`), and :class:`ToolNames` carries that
answer to the judges, so a check means the same thing on every agent CLI.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from caliper.plugin.attempt import Turn
from caliper.system import attrs_classes

SHELL = "shell"
READ = "read"
WRITE = "write"
EDIT = "edit"
SKILL = "skill"
MCP = "mcp"

TOOL_KINDS = (SHELL, READ, WRITE, EDIT, SKILL)
"""The kinds a backend maps to its own tool names (``mcp`` is asked of ``mcp_tool_name``)."""
VOCABULARY = (*TOOL_KINDS, MCP)
"""Every name of the vocabulary, as specs write them."""


def _default_mcp_name(server: str, tool: str) -> str:
    return f"mcp__{server}__{tool}"


def _default_shell_command(tool_input: Any) -> str | None:
    return shell_command_of(tool_input)


def shell_command_of(tool_input: Any) -> str | None:
    """The ``command`` string of a shell call's input (``{"command": ...}``), else ``None``."""
    if isinstance(tool_input, Mapping):
        command = tool_input.get("command")
        if isinstance(command, str):
            return command
        if isinstance(command, Sequence) and all(isinstance(a, str) for a in command):
            return " ".join(command)
    return None


@attrs_classes.frozen
class ToolNames:
    """A backend's answer to "which of your tools is which": what a ``tools:`` check reads.

    ``vocabulary`` maps each kind of :data:`TOOL_KINDS` to the backend's own names for it (a
    kind the agent has no tool for is absent); ``mcp_name(server, tool)`` is the name an MCP
    call carries in the transcript; ``shell_command(input)`` the command a shell call ran
    (unwrapped from ``bash -lc '…'`` where the agent wraps it), or ``None``.
    """

    backend: str
    vocabulary: Mapping[str, tuple[str, ...]]
    mcp_name: Callable[[str, str], str] = _default_mcp_name
    shell_command: Callable[[Any], str | None] = _default_shell_command

    def kind_of(self, name: str) -> str | None:
        """The vocabulary kind of the backend's own tool ``name``, or ``None``."""
        for kind, names in self.vocabulary.items():
            if name in names:
                return kind
        return None


@attrs_classes.frozen
class ToolCall:
    """One tool call of a transcript: its place, the backend's name for it, its input.

    ``number`` counts calls from 1; ``turn`` is the 1-based position of the call in the
    transcript; ``kind`` its vocabulary name when the backend maps it (``mcp`` for an MCP
    call), ``text`` what an ``input:`` pattern is matched against: the command of a shell
    call, the input as compact JSON otherwise.
    """

    number: int
    turn: int
    tool: str
    kind: str | None
    input: Any
    text: str

    def excerpt(self, width: int = 120) -> str:
        """``text`` cut to ``width`` characters on one line, for a failure message."""
        flat = " ".join(self.text.split())
        return flat if len(flat) <= width else flat[: width - 1] + "…"


def input_text(tool_input: Any) -> str:
    """A tool input as one string: itself when it is a string, else compact sorted JSON."""
    if isinstance(tool_input, str):
        return tool_input
    try:
        return json.dumps(tool_input, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(tool_input)


def is_call(turn: Turn) -> bool:
    """Whether ``turn`` is a tool call (not the separate result turn some CLIs emit)."""
    return turn.role == "tool" and bool(turn.tool_name) and turn.tool_input is not None


def _is_mcp(tool: str, names: ToolNames | None) -> bool:
    """Whether ``tool`` is named like an MCP tool of the backend (its ``mcp_name`` prefix)."""
    marker = "\x00"
    prefix = names.mcp_name(marker, marker).split(marker)[0] if names else "mcp__"
    return bool(prefix) and tool.startswith(prefix)


def tool_calls(transcript: Sequence[Turn], names: ToolNames | None) -> list[ToolCall]:
    """The tool calls of ``transcript`` in order, named in the vocabulary of ``names``.

    Without ``names`` (no backend, as in ``caliper validate --probe``) no call has a kind.
    """
    calls: list[ToolCall] = []
    for position, turn in enumerate(transcript, start=1):
        if not is_call(turn):
            continue
        tool = str(turn.tool_name)
        kind = names.kind_of(tool) if names is not None else None
        if kind is None and _is_mcp(tool, names):
            kind = MCP
        command = names.shell_command(turn.tool_input) if kind == SHELL and names else None
        text = command if command is not None else input_text(turn.tool_input)
        calls.append(ToolCall(len(calls) + 1, position, tool, kind, turn.tool_input, text))
    return calls


def transcript_data(transcript: Sequence[Turn], names: ToolNames | None) -> dict[str, Any]:
    """The normalised transcript as JSON-ready data (the ``CALIPER_TRANSCRIPT`` file).

    ``turns`` holds every turn (role, text, tool name, input, output, error flag);
    ``calls`` the tool calls with their vocabulary kind and matched text.
    """
    turns = [
        {
            "turn": position,
            "role": turn.role,
            "content": turn.content,
            "tool": turn.tool_name,
            "input": turn.tool_input,
            "output": turn.tool_output,
            "is_error": turn.is_error,
        }
        for position, turn in enumerate(transcript, start=1)
    ]
    calls = [
        {
            "number": call.number,
            "turn": call.turn,
            "tool": call.tool,
            "kind": call.kind,
            "input": call.input,
            "text": call.text,
        }
        for call in tool_calls(transcript, names)
    ]
    return {
        "version": 1,
        "backend": names.backend if names else None,
        "turns": turns,
        "calls": calls,
    }
