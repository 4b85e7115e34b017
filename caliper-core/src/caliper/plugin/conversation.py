"""A planted conversation: the conversation a task starts in the middle of, in a backend-neutral
form.

A task's ``history:`` file (see ``docs/spec.md``) is loaded into a :class:`PlantedConversation` by
``caliper.spec.conversation``. Each backend translates the turns into its own CLI's stored-session
format inside the attempt's sandbox and resumes that session, so the model sees real earlier
messages and tool results; the task's prompt is the next user turn. Nothing here is ever
pasted into a prompt.
"""

from __future__ import annotations

from pathlib import Path

from caliper.system import attrs_classes


@attrs_classes.frozen
class UserTurn:
    """Something the user said."""

    text: str


@attrs_classes.frozen
class AssistantTurn:
    """Something the assistant said (plain text, no tool call)."""

    text: str


@attrs_classes.frozen
class ShellTurn:
    """The assistant ran one shell command and got ``output`` back (exit status ``exit_code``)."""

    command: str
    output: str = ""
    exit_code: int = 0

    @property
    def failed(self) -> bool:
        """Whether the command ended with a non-zero status."""
        return self.exit_code != 0


ConversationTurn = UserTurn | AssistantTurn | ShellTurn


@attrs_classes.frozen
class PlantedConversation:
    """A validated ``history:`` file: where it was (``path``, absolute), how the spec named it
    (``declared_as``), the SHA-256 of the bytes read, and its turns in order.

    Invariants the loader guarantees: at least one turn, the first is a :class:`UserTurn`,
    no two user turns in a row, and the last is not a user turn (the prompt comes next).
    """

    path: Path
    declared_as: str
    sha256: str
    turns: tuple[ConversationTurn, ...]


def call_id(conversation: PlantedConversation, index: int, prefix: str) -> str:
    """A tool-call id for the shell turn at ``index``, stable for one conversation file."""
    return f"{prefix}hist{conversation.sha256[:12]}n{index}"


def shell_output_text(turn: ShellTurn) -> str:
    """The tool result a model sees for a shell turn (the output, or a note that it was empty)."""
    if turn.output:
        return turn.output
    return "(no output)" if not turn.failed else f"(no output; exit status {turn.exit_code})"


History = PlantedConversation
"""The former name of :class:`PlantedConversation` (kept until 2.0)."""
HistoryTurn = ConversationTurn
"""The former name of :data:`ConversationTurn` (kept until 2.0)."""
