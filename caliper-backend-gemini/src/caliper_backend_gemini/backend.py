"""The ``gemini`` backend: runs ``gemini -o stream-json`` headlessly in an attempt's sandbox."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from caliper.plugin import SetupError
from caliper.plugin.attempt import (
    AgentStatus,
    AttemptRequest,
    AttemptResult,
    AttemptSandbox,
    McpServerConfig,
    PromptRequest,
    PromptResult,
)
from caliper.plugin.backend import Backend, CliUpdate, run_agent
from caliper_backend_gemini import (
    conversation,
    errors,
    events,
    home,
    invocation,
    login,
    mcp_check,
    user_setup,
    versions,
)
from caliper_backend_gemini.mcp import entries_of

SKILL_TOOL = "activate_skill"
_GEMINI_MODEL = re.compile(r"^gemini-", re.IGNORECASE)


def loaded_skills(run: events.GeminiRun) -> list[str] | None:
    """Skills ``activate_skill`` loaded successfully, in first-load order (``None``: the run
    never reached its ``result`` event, so a missing call proves nothing)."""
    if not run.finished:
        return None
    names: list[str] = []
    for call in run.successful_calls(SKILL_TOOL):
        name = call.parameters.get("name") if isinstance(call.parameters, dict) else None
        if isinstance(name, str) and name not in names:
            names.append(name)
    return names


class GeminiBackend(Backend[home.HomeSeed]):
    """Google's Gemini CLI (``gemini -o stream-json``)."""

    id = "gemini"
    cli_name = "gemini"
    install_hint = f"npm install -g {versions.NPM_PACKAGE}"
    default_model = None
    skill_listing_budget = None  # renderAgentSkills lists every enabled skill whole (docs page)

    def tool_vocabulary(self) -> Mapping[str, Sequence[str]]:
        """Gemini CLI's tools: ``run_shell_command``, ``read_file`` / ``read_many_files``,
        ``write_file``, ``replace``, ``activate_skill``.
        """
        return {
            "shell": ("run_shell_command",),
            "read": ("read_file", "read_many_files"),
            "write": ("write_file",),
            "edit": ("replace",),
            "skill": ("activate_skill",),
        }

    def supports_mcp(self) -> bool:
        """Yes: the spec's ``mcp:`` servers reach the agent."""
        return True

    def supports_conversation(self) -> bool:
        """Yes: the planted conversation (``history:``) is saved as a Gemini CLI session and resumed
        (:mod:`caliper_backend_gemini.conversation`)."""
        return True

    def supports_user_customizations(self) -> bool:
        """Yes: ``--user-customizations`` loads the user's ``~/.gemini`` setup
        (:mod:`caliper_backend_gemini.user_setup`)."""
        return True

    def mcp_tool_name(self, server: str, tool: str) -> str:
        """Gemini CLI names MCP tools ``mcp_<server>_<tool>``."""
        return f"mcp_{server}_{tool}"

    def claims_model(self, model: str) -> bool:
        """Google model ids: ``gemini-*``."""
        return bool(_GEMINI_MODEL.match(model.strip()))

    def cli_version(self, path: Path) -> str | None:
        return versions.installed_version(path)

    def check_ready(self, model: str | None, real_home: Path) -> None:
        """An API key or a saved Google login must exist (else exit 3 at once)."""
        login.check_login(real_home, os.environ)

    def check_mcp_servers(self, servers: Sequence[McpServerConfig], real_home: Path) -> None:
        """``gemini mcp list`` on the spec's servers: one that does not connect stops the run
        (Gemini CLI itself would only warn and run on without its tools)."""
        cli = self.find_cli()
        if cli is not None and servers:
            mcp_check.check_servers(cli, servers)

    def update_info(self, check_latest: bool) -> CliUpdate:
        """Installed vs newest on npm."""
        return versions.update_info(self, check_latest)

    def prepare_home(self, sandbox: AttemptSandbox) -> home.HomeSeed:
        """``~/.gemini/settings.json`` (and the user's OAuth login without a key), and the
        environment (attempts and judge calls alike)."""
        return home.seed(sandbox)

    def attempt(self, cli: Path, request: AttemptRequest) -> AttemptResult:
        """One ``gemini`` run on the task prompt; activation from ``activate_skill`` calls."""
        loaded = None
        try:
            seeded = self.seeded_home(request.sandbox)
            servers = entries_of(request.mcp)
            if request.user_customizations:
                declared = [skill.name for skill in request.skills]
                loaded = _load_user_setup(request.sandbox, seeded, servers, declared)
            elif servers:
                home.with_mcp(request.sandbox, seeded, servers)
        except SetupError as exc:
            return AttemptResult(status=AgentStatus.SETUP_ERROR, error=exc.render())
        env = dict(seeded.env)
        if loaded is not None:
            env.update({k: v for k, v in loaded.env.items() if k not in env})
        if request.mcp is not None:
            env.update(request.mcp.env)
        argv = invocation.attempt_argv(cli, model=request.model)
        if request.conversation is not None:
            conversation.plant_session(request.conversation, request.sandbox)
            argv = [*argv, *conversation.RESUME_ARGS]
        process = run_agent(argv, env, request)
        run = events.parse_events(process.stdout)
        ending = errors.classify(process, run, timeout=request.timeout)
        activated, undeclared, built_in = _split(loaded_skills(run), request.skills)
        return AttemptResult(
            status=ending.status,
            final_answer=run.final_answer,
            transcript=tuple(run.turns),
            activated=activated,
            undeclared=undeclared,
            built_in=built_in,
            user_setup=loaded.setup if loaded is not None else None,
            usage=run.usage,
            model=run.model or request.model,
            error=ending.error,
            exit_code=process.returncode,
            duration_seconds=process.duration_seconds,
        )

    def prompt(self, cli: Path, request: PromptRequest) -> PromptResult:
        """One question for a judge, in the ``default`` approval mode (no changing tools)."""
        try:
            seeded = self.seeded_home(request.sandbox)
        except SetupError as exc:
            return PromptResult(status=AgentStatus.SETUP_ERROR, error=exc.render())
        argv = invocation.prompt_argv(cli, model=request.model)
        process = run_agent(argv, dict(seeded.env), request)
        run = events.parse_events(process.stdout)
        ending = errors.classify(process, run, timeout=request.timeout)
        return ending.prompt_result(
            run.final_answer, model=run.model or request.model, usage=run.usage
        )


def _load_user_setup(
    sandbox: AttemptSandbox,
    seeded: home.HomeSeed,
    servers: Mapping[str, object],
    declared: Sequence[str],
) -> user_setup.LoadedSetup:
    """Bring the user's setup in and write ``settings.json``: theirs under caliper's, with
    their MCP servers beside the spec's (the spec's win)."""
    user_dir = home.user_gemini_dir(sandbox.real_home, os.environ)
    loaded = user_setup.load(
        sandbox, user_dir, home.read_user_settings(user_dir), os.environ, servers
    )
    settings = user_setup.merge_under(loaded.settings, seeded.settings, declared)
    every = {**loaded.mcp_servers, **servers}
    if every:
        settings["mcpServers"] = every
    home.write_settings(sandbox, settings, allowed=loaded.references)
    return loaded


def _split(
    loaded: list[str] | None, skills: Sequence[object]
) -> tuple[list[str] | None, list[str] | None, list[str] | None]:
    """(declared, undeclared, built-in) of the loaded skills; all ``None`` when unknown."""
    if loaded is None:
        return None, None, None
    declared = {getattr(skill, "name", "") for skill in skills}
    built = set(home.BUILT_IN_SKILLS)
    return (
        [n for n in loaded if n in declared],
        [n for n in loaded if n not in declared and n not in built],
        [n for n in loaded if n not in declared and n in built],
    )
