"""The contract between Caliper and its plugins: the one package a plugin imports.

A backend, judge or executor plugin imports what it needs from here (``from caliper.plugin
import Backend, AttemptRequest, run_process``); the modules under ``caliper.plugin`` hold the
definitions, and everything else in Caliper (the runner, the commands, the results) is private
to it and may change in any release. ``docs/plugins/api.md`` documents exactly these names, in
the sections of :data:`SECTIONS`, and is generated from them.

Names are imported on first use, so ``import caliper.plugin`` costs almost nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

SECTIONS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # (section title, defining module, names) in the order docs/plugins/api.md shows them
    (
        "What a backend receives and returns",
        "caliper.plugin.attempt",
        (
            "AttemptRequest", "AttemptSandbox", "InstalledSkill", "NativeMcpConfig",
            "McpServerConfig", "AttemptResult", "AgentStatus", "Turn", "Usage", "PromptRequest",
            "PromptResult", "UserSetup",
        ),
    ),
    ("Running the agent CLI", "caliper.system.process", ("run_process", "ProcessResult")),
    (
        "Base classes",
        "caliper.plugin.backend",
        (
            "Backend", "SkillInstaller", "FolderSkillInstaller", "McpTranslator", "CliInfo",
            "CliUpdate", "copy_skill_tree", "copy_user_skills", "CopiedUserSkills", "run_agent",
            "npm_update",
        ),
    ),
    ("Hook implementations", "caliper.plugin.markers", ("hookimpl",)),
    ("CLI versions", "caliper.plugin.cli_versions", ("version_from_cli",)),
    (
        "Judges",
        "caliper.plugin.verdict",
        ("JudgeContext", "Ask", "Reply", "JudgeUsage", "Verdict"),
    ),
    ("Judge plugins", "caliper.plugin.judge", ("Judge", "ValueProblem", "LLM_JUDGE_MARKER")),
    (
        "How a run ended",
        "caliper.plugin.agent_ending",
        ("AgentEnding", "COMPLETED", "stopped_early", "status_for_http", "shorten"),
    ),
    (
        "Private files",
        "caliper.plugin.private_files",
        ("write_private", "copy_private", "write_secret_file"),
    ),
    ("Attempt sandboxes", "caliper.plugin.sandbox", ("make_sandbox", "remove_sandbox")),
    ("Unusable MCP servers", "caliper.plugin.mcp_unusable", ("unusable_mcp_message",)),
    (
        "Activation from file reads",
        "caliper.plugin.skill_reads",
        ("activated_by_reads", "undeclared_reads"),
    ),
    ("Skills", "caliper.plugin.skills", ("ResolvedSkill",)),
    ("Skill folders", "caliper.system.skill_tree", ("skill_file_name", "nested_skill_files")),
    (
        "Planted conversations",
        "caliper.plugin.conversation",
        (
            "PlantedConversation", "ConversationTurn", "UserTurn", "AssistantTurn", "ShellTurn",
            "call_id", "shell_output_text",
        ),
    ),
    ("MCP secrets", "caliper.plugin.mcp", ("EnvReferences", "SecretSet")),
    ("Errors", "caliper.errors", ("CaliperError", "SetupError", "UsageError")),
    (
        "Executors",
        "caliper.plugin.executor",
        (
            "Executor", "ExecutorSession", "ExecutorOption", "RunWork", "RunBundle", "AttemptJob",
            "FinishedAttempt",
        ),
    ),
)  # fmt: skip
"""The face, section by section: what docs/plugins/api.md documents, and nothing else."""

_WHERE: dict[str, str] = {name: module for _, module, names in SECTIONS for name in names}

__all__ = ["SECTIONS", *_WHERE]


def __getattr__(name: str) -> object:
    """A name of the face, imported from its module on first use (then a plain attribute)."""
    try:
        module = _WHERE[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The face's names (and the module's own)."""
    return sorted({*globals(), *_WHERE})


if TYPE_CHECKING:  # the same names, for type checkers and editors
    from caliper.errors import CaliperError, SetupError, UsageError
    from caliper.plugin.agent_ending import (
        COMPLETED,
        AgentEnding,
        shorten,
        status_for_http,
        stopped_early,
    )
    from caliper.plugin.attempt import (
        AgentStatus,
        AttemptRequest,
        AttemptResult,
        AttemptSandbox,
        InstalledSkill,
        McpServerConfig,
        NativeMcpConfig,
        PromptRequest,
        PromptResult,
        Turn,
        Usage,
        UserSetup,
    )
    from caliper.plugin.backend import (
        Backend,
        CliInfo,
        CliUpdate,
        CopiedUserSkills,
        FolderSkillInstaller,
        McpTranslator,
        SkillInstaller,
        copy_skill_tree,
        copy_user_skills,
        npm_update,
        run_agent,
    )
    from caliper.plugin.cli_versions import version_from_cli
    from caliper.plugin.conversation import (
        AssistantTurn,
        ConversationTurn,
        PlantedConversation,
        ShellTurn,
        UserTurn,
        call_id,
        shell_output_text,
    )
    from caliper.plugin.executor import (
        AttemptJob,
        Executor,
        ExecutorOption,
        ExecutorSession,
        FinishedAttempt,
        RunBundle,
        RunWork,
    )
    from caliper.plugin.judge import LLM_JUDGE_MARKER, Judge, ValueProblem
    from caliper.plugin.markers import hookimpl
    from caliper.plugin.mcp import EnvReferences, SecretSet
    from caliper.plugin.mcp_unusable import unusable_mcp_message
    from caliper.plugin.private_files import copy_private, write_private, write_secret_file
    from caliper.plugin.sandbox import make_sandbox, remove_sandbox
    from caliper.plugin.skill_reads import activated_by_reads, undeclared_reads
    from caliper.plugin.skills import ResolvedSkill
    from caliper.plugin.verdict import Ask, JudgeContext, JudgeUsage, Reply, Verdict
    from caliper.system.process import ProcessResult, run_process
    from caliper.system.skill_tree import nested_skill_files, skill_file_name
