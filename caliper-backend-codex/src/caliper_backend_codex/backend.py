"""The ``codex`` backend: runs ``codex exec --json`` headlessly in an attempt's sandbox."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from caliper.plugin import SetupError
from caliper.plugin.attempt import (
    AgentStatus,
    AttemptRequest,
    AttemptResult,
    AttemptSandbox,
    InstalledSkill,
    PromptRequest,
    PromptResult,
)
from caliper.plugin.backend import Backend, CliUpdate, run_agent
from caliper.plugin.skill_reads import activated_by_reads, undeclared_reads
from caliper_backend_codex import (
    activation,
    conversation,
    errors,
    events,
    home,
    invocation,
    login,
    rollout,
    versions,
)
from caliper_backend_codex import config as codex_config
from caliper_backend_codex.locate import find_codex
from caliper_backend_codex.mcp import tables_of


def skills_root_of(prepared: home.PreparedHome) -> Path:
    """The user-scope skills folder inside the attempt's CODEX_HOME."""
    return prepared.codex_home / "skills"


_CODEX_MODEL = re.compile(r"^(gpt-|codex-|o[134](?:$|-))", re.IGNORECASE)


def successful_reads(
    run: events.CodexRun, facts: rollout.Rollout, prepared: home.PreparedHome, workdir: Path
) -> list[str]:
    """Absolute paths of files read by commands that succeeded (a failed read loaded nothing)."""
    paths = {"home": prepared.env.get("HOME"), "codex_home": str(prepared.codex_home)}
    reads: list[str] = []
    for command in run.succeeded_commands:
        reads += activation.read_files(command, cwd=str(workdir), **paths)
    reads += run.read_paths
    for command in facts.commands:
        if not command.failed:
            reads += activation.read_files(command.argv, cwd=command.cwd or str(workdir), **paths)
    return reads


def detect_activation(
    run: events.CodexRun,
    facts: rollout.Rollout,
    skills: Sequence[InstalledSkill],
    prepared: home.PreparedHome,
    workdir: Path,
) -> tuple[list[str] | None, list[str] | None]:
    """Skills whose SKILL.md the agent read successfully, and undeclared SKILL.md files read.

    Both are ``None`` when nothing is observable.
    """
    if not skills or not run.usable:
        return None, None
    reads = successful_reads(run, facts, prepared, workdir)
    root = str(skills_root_of(prepared))
    return (
        activated_by_reads(reads, skills),
        undeclared_reads(reads, skills, root),
    )


class CodexBackend(Backend[home.HomeSeed]):
    """OpenAI's Codex CLI (``codex exec --json``)."""

    id = "codex"
    cli_name = "codex"
    install_hint = "npm install -g @openai/codex"
    default_model = None
    skill_listing_budget = 21_700
    """Codex 0.171.0 with gpt-5.5 (measured with the scripted server): 70 skills of 250-
    character descriptions listed whole, 76 and more got every description shortened alike
    (to 242 characters at 76, 66 at 200)."""
    skill_listing_overflow = "every description is shortened to fit"

    def tool_vocabulary(self) -> Mapping[str, Sequence[str]]:
        """Codex runs commands (``shell``) and changes files with ``apply_patch`` (write and edit
        alike); it has no read or skill tool (it reads files and skills with shell commands).
        """
        return {"shell": ("shell",), "write": ("apply_patch",), "edit": ("apply_patch",)}

    def shell_command(self, tool_input: Any) -> str | None:
        """The script of Codex's ``/bin/bash -lc '<script>'`` command (the command itself when
        it is not wrapped)."""
        from caliper.plugin.tools import shell_command_of
        from caliper_backend_codex.activation import shell_script

        command = tool_input.get("command") if isinstance(tool_input, Mapping) else None
        if isinstance(command, list) and all(isinstance(a, str) for a in command):
            return shell_script(command)
        found = shell_command_of(tool_input)
        return shell_script(found) if found is not None else None

    def supports_mcp(self) -> bool:
        """Yes: the spec's ``mcp:`` servers reach the agent."""
        return True

    def supports_conversation(self) -> bool:
        """Yes: a task's planted conversation (``history:``) is stored as a session and resumed."""
        return True

    def supports_user_customizations(self) -> bool:
        """Yes: ``--user-customizations`` loads the user's own setup."""
        return True

    def skill_listing_chars(self, skills: Sequence[tuple[str, str]]) -> int:
        """One ``- name: description (file: r0/name/SKILL.md)`` line per skill."""
        return sum(2 * len(name) + len(description) + 25 for name, description in skills)

    def find_cli(self) -> Path | None:
        """``$CODEX_CLI_PATH``, else the Codex desktop app's binary, else PATH."""
        return find_codex()

    def claims_model(self, model: str) -> bool:
        """OpenAI model ids: ``gpt-*``, the ``o1``/``o3``/``o4`` families, ``codex-*``."""
        return bool(_CODEX_MODEL.match(model.strip()))

    def cli_version(self, path: Path) -> str | None:
        return versions.installed_version(path)

    def check_ready(self, model: str | None, real_home: Path) -> None:
        """The configured provider must have credentials (a ``codex login`` or an API key);
        without them codex would retry the network for every attempt's whole time budget."""
        user_home = codex_config.user_codex_home(real_home, os.environ)
        login.check_login(user_home, codex_config.load_user_config(user_home), os.environ)

    def update_info(self, check_latest: bool) -> CliUpdate:
        """Installed vs newest, and how to update (the desktop app updates its own binary)."""
        return versions.update_info(self, check_latest)

    def prepare_home(self, sandbox: AttemptSandbox) -> home.HomeSeed:
        """CODEX_HOME with the user's login (when the provider uses it), and the environment
        (attempts and judge calls alike); ``config.toml`` is written by the run itself."""
        return home.seed(sandbox)

    def attempt(self, cli: Path, request: AttemptRequest) -> AttemptResult:
        """One ``codex exec`` run on the task prompt, then its rollout read for activation."""
        try:
            prepared = home.prepare(
                request.sandbox,
                mcp_servers=tables_of(request.mcp),
                user_customizations=request.user_customizations,
                seeded=self.seeded_home(request.sandbox),
            )
        except SetupError as exc:
            return AttemptResult(status=AgentStatus.SETUP_ERROR, error=exc.render())
        env = dict(prepared.env)
        if request.mcp is not None:
            env.update(request.mcp.env)
        argv = invocation.attempt_argv(cli, model=request.model)
        if request.conversation is not None:
            planted = conversation.plant_rollout(
                request.conversation, request.sandbox, prepared.codex_home
            )
            argv = conversation.resume_argv(argv, planted)
        process = run_agent(argv, env, request)
        run = events.parse_events(process.stdout)
        ending = errors.classify(process, run, timeout=request.timeout)
        facts = rollout.read_rollout(rollout.find_rollout(prepared.codex_home, run.thread_id))
        activated, undeclared = detect_activation(
            run, facts, request.skills, prepared, request.sandbox.workdir
        )
        return AttemptResult(
            status=ending.status,
            final_answer=run.final_answer,
            transcript=tuple(run.turns),
            activated=activated,
            undeclared=undeclared,
            user_setup=prepared.user_setup,
            usage=run.usage,
            model=facts.model or request.model or _configured_model(prepared),
            error=ending.error,
            exit_code=process.returncode,
            duration_seconds=process.duration_seconds,
        )

    def prompt(self, cli: Path, request: PromptRequest) -> PromptResult:
        """One read-only, ephemeral ``codex exec`` question for a judge."""
        try:
            prepared = home.prepare(
                request.sandbox, skill_instructions=False, seeded=self.seeded_home(request.sandbox)
            )
        except SetupError as exc:
            return PromptResult(status=AgentStatus.SETUP_ERROR, error=exc.render())
        process = run_agent(invocation.prompt_argv(cli, model=request.model), prepared.env, request)
        run = events.parse_events(process.stdout)
        ending = errors.classify(process, run, timeout=request.timeout)
        return ending.prompt_result(
            run.final_answer, model=request.model or _configured_model(prepared), usage=run.usage
        )


def _configured_model(prepared: home.PreparedHome) -> str | None:
    model = prepared.config.get("model")
    return model if isinstance(model, str) and model else None
