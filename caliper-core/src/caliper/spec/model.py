"""The in-memory form of a ``*.eval.yaml`` spec, after validation.

Built by ``caliper.spec.load``; read by the runner. Values are as the user wrote them:
``${VAR}`` references in MCP settings stay unresolved here (they are resolved per run, in
memory only), and paths stay relative to ``Spec.directory``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from caliper.plugin.mcp_server import McpServer as McpServer  # re-exported
from caliper.spec.names import spec_name_for as spec_name_for  # re-exported
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.plugin.conversation import PlantedConversation

CORE_TASK_KEYS = ("name", "prompt", "setup", "cleanup", "history")


@attrs_classes.frozen
class SkillSource:
    """One neighbourhood member as declared.

    ``kind`` is ``"path"`` (``path`` is the SKILL.md or its folder, relative to the spec) or
    ``"git"`` (``repo`` is ``owner/name`` or a clone URL, ``ref`` an optional branch, tag or
    commit, ``path`` the SKILL.md inside the repository, default ``SKILL.md``).
    """

    kind: str
    declared_as: str
    path: str | None = None
    repo: str | None = None
    ref: str | None = None
    line: int | None = None


@attrs_classes.frozen
class Sandbox:
    """Per-attempt environment settings: PATH additions and files the agent must not read."""

    extra_path: tuple[str, ...] = ()
    forbidden_files: tuple[str, ...] = ()


@attrs_classes.frozen
class Task:
    """One task: a prompt plus checks keyed by the judge that owns them.

    ``conversation`` is the planted conversation from the task's ``history:`` file, if any;
    the prompt is then the next user turn.

    ``checks`` maps a judge's task key (``assert``, ``expect``, ``activates``, or a third-party
    key) to its validated value, in the order written.
    """

    name: str
    prompt: str
    index: int
    setup: str | None = None
    cleanup: str | None = None
    checks: Mapping[str, Any] = attrs.field(factory=dict)
    line: int | None = None
    conversation: PlantedConversation | None = None
    """The planted conversation the task starts in (``history:``), read once at load time."""
    activation_key: str | None = None
    """The key of the task's check whose judge declares ``scores_activation`` (``activates``
    for the built-in judge), or ``None`` when the task asks nothing about activation."""
    expected_skills: tuple[str, ...] = ()
    """The skills that check expects to load (its judge's ``expected_skills``)."""

    @property
    def activates(self) -> list[str] | None:
        """The skills the task expects to load, or ``None`` when it has no activation check."""
        return list(self.expected_skills) if self.activation_key is not None else None


@attrs_classes.frozen
class Spec:
    """A validated spec. ``name`` is the file name without ``.eval.yaml`` (or ``.yaml``)."""

    path: Path
    name: str
    skills: tuple[SkillSource, ...] = ()
    sandbox: Sandbox = Sandbox()
    mcp: tuple[McpServer, ...] = ()
    tasks: tuple[Task, ...] = ()
    user_customizations: bool | None = None
    """``user_customizations:`` (``None``: not written; ``--user-customizations`` decides)."""
    sha256: str = ""
    """SHA-256 of the file's bytes as they were read to load this spec."""

    @property
    def directory(self) -> Path:
        return self.path.parent
