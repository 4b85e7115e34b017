"""The pi backend: runs ``pi --print --mode json`` once per attempt in an isolated agent dir."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from caliper.plugin import ProcessResult, SetupError
from caliper.plugin.agent_ending import AgentEnding
from caliper.plugin.attempt import (
    AgentStatus,
    AttemptRequest,
    AttemptResult,
    AttemptSandbox,
    NativeMcpConfig,
    PromptRequest,
    PromptResult,
)
from caliper.plugin.backend import Backend, CliUpdate, run_agent
from caliper.plugin.conversation import PlantedConversation
from caliper_backend_pi import conversation, mcp, mcp_check, versions
from caliper_backend_pi.activation import activated_skills, undeclared_skills
from caliper_backend_pi.errors import classify_run
from caliper_backend_pi.events import PiRun, parse_output
from caliper_backend_pi.home import (
    attempt_env,
    check_no_foreign_skills,
    has_default_model,
    load_user_setup,
    prepare_agent_dir,
    read_json_config,
    skills_root,
    user_agent_dir,
)
from caliper_backend_pi.transcript import build_transcript, final_answer

BASE_ARGS = ("--print", "--mode", "json", "--no-session", "--no-context-files")
"""Headless JSON events, no session file, and no AGENTS.md/CLAUDE.md from outside the task."""

JUDGE_ARGS = ("--no-tools", "--no-skills", "--no-extensions", "--no-prompt-templates")

NO_DEFAULT_MODEL = (
    "pi has no default model configured, and --model pi names none. Without one pi falls "
    "back to its built-in default provider (google), which is rarely the one you are logged "
    "in to."
)
NO_DEFAULT_MODEL_HINT = (
    "Pass a model with --model pi:<provider>/<model> (for example pi:anthropic/claude-sonnet-4-5)"
    ", or choose a default in pi (`/model`), which saves defaultProvider and defaultModel in "
    "{settings}."
)


@attrs.frozen
class SeededAgentDir:
    """What :meth:`PiBackend.prepare_home` left in a sandbox: the settings it wrote to the
    attempt's agent dir, and the environment pi runs with there."""

    settings: Mapping[str, Any]
    env: Mapping[str, str]


class PiBackend(Backend[SeededAgentDir]):
    """Runs attempts and judge prompts through the pi coding agent CLI."""

    id = "pi"
    cli_name = "pi"
    install_hint = f"npm install -g {versions.PACKAGE}"

    def hides_model_disabled_skills(self) -> bool:
        """Yes: pi (0.74 and 1.6) leaves `disable-model-invocation` skills out of the prompt's
        list."""
        return True

    def supports_user_customizations(self) -> bool:
        """Yes: ``--user-customizations`` loads the user's own setup."""
        return True

    def cli_version(self, path: Path) -> str | None:
        return versions.cached_version(path)

    def tool_vocabulary(self) -> Mapping[str, Sequence[str]]:
        """pi's lower-case tools; it has no skill tool (it loads a skill by ``read``-ing its
        ``SKILL.md``).
        """
        return {"shell": ("bash",), "read": ("read",), "write": ("write",), "edit": ("edit",)}

    def supports_mcp(self) -> bool:
        """True when the pi that would run (``PI_CLI_PATH`` or PATH) is 1.0 or newer."""
        cli = self.find_cli()
        return cli is not None and mcp.has_mcp(versions.cached_version(cli))

    def mcp_refusal(self) -> str | None:
        """Why the pi found cannot honour ``mcp:``, naming its version and the way out."""
        if self.supports_mcp():
            return None
        cli = self.find_cli()
        found = versions.cached_version(cli) if cli is not None else None
        return mcp.refusal(cli, found, versions.UPDATE_COMMAND)

    def supports_conversation(self) -> bool:
        """True when the pi that would run reads the session format caliper plants (0.74+)."""
        cli = self.find_cli()
        return cli is not None and conversation.can_resume(versions.cached_version(cli))

    def conversation_refusal(self) -> str | None:
        """Why the pi found cannot start from a planted conversation."""
        if self.supports_conversation():
            return None
        cli = self.find_cli()
        return conversation.refusal(cli, versions.cached_version(cli) if cli is not None else None)

    def check_ready(self, model: str | None, real_home: Path) -> None:
        """Without ``pi:<model>``, the user's pi settings must name a default model."""
        if model:
            return
        where = user_agent_dir(real_home, os.environ) / "settings.json"
        if not has_default_model(read_json_config(where)):
            raise SetupError(NO_DEFAULT_MODEL, hint=NO_DEFAULT_MODEL_HINT.format(settings=where))

    def update_info(self, check_latest: bool) -> CliUpdate:
        """Installed and newest pi versions (npm), with a note when the newest needs a newer
        Node or pi still comes from its old package name."""
        return versions.update_info(self.id, self.find_cli(), check_latest)

    # -- shared ---------------------------------------------------------------------------
    def prepare_home(self, sandbox: AttemptSandbox) -> SeededAgentDir:
        """The attempt's agent dir seeded from the user's (login, models, cleaned settings) and
        the environment pi runs with (attempts and judge calls alike).

        Refuses (:class:`SetupError`) a sandbox where pi would also load skills from folders
        above it.
        """
        check_no_foreign_skills(sandbox)
        settings = prepare_agent_dir(sandbox)
        return SeededAgentDir(settings=settings, env=attempt_env(sandbox))

    def _prepare(
        self, sandbox: AttemptSandbox, model: str | None, native_mcp: NativeMcpConfig | None = None
    ) -> dict[str, str]:
        """The seeded agent dir (:meth:`prepare_home`, made ahead or now) with the run's MCP
        servers; check a model will be chosen; return the env."""
        seeded = self.seeded_home(sandbox)
        if not model and not has_default_model(seeded.settings):
            where = user_agent_dir(sandbox.real_home, os.environ) / "settings.json"
            raise SetupError(NO_DEFAULT_MODEL, hint=NO_DEFAULT_MODEL_HINT.format(settings=where))
        env = dict(seeded.env)
        if native_mcp is not None:
            sse = mcp.unsupported_servers(native_mcp)
            if sse:
                raise SetupError(
                    f"pi cannot connect to the MCP server {sse[0]!r}: it uses the legacy SSE "
                    "transport, and pi speaks only stdio and streamable HTTP.",
                    hint="Give that server `transport: http` with its streamable HTTP URL "
                    "(often the same address ending in /mcp instead of /sse).",
                )
            mcp.write_config(sandbox, native_mcp)
            env.update(native_mcp.env)
        return env

    @staticmethod
    def _argv(cli: Path, model: str | None, extra: tuple[str, ...] = ()) -> list[str]:
        argv = [str(cli), *BASE_ARGS, *extra]
        if model:
            argv += ["--model", model]
        return argv

    def _run(
        self,
        cli: Path,
        request: AttemptRequest | PromptRequest,
        extra: tuple[str, ...] = (),
        native_mcp: NativeMcpConfig | None = None,
        planted: PlantedConversation | None = None,
    ) -> tuple[ProcessResult, PiRun]:
        env = self._prepare(request.sandbox, request.model, native_mcp)
        argv = self._argv(cli, request.model, extra)
        if planted is not None:
            argv = conversation.session_argv(
                argv, conversation.plant_session(planted, request.sandbox)
            )
        # The prompt goes through stdin (a file, closed at its end): pi reads piped stdin as
        # the message, and argv would misread prompts starting with "-" or "@".
        process = run_agent(argv, env, request)
        return process, parse_output(process.stdout)

    # -- attempts -------------------------------------------------------------------------
    def attempt(self, cli: Path, request: AttemptRequest) -> AttemptResult:
        """One ``pi --print --mode json`` run on the task prompt in a fresh agent dir."""
        sandbox = request.sandbox
        user = load_user_setup(sandbox) if request.user_customizations else None
        process, run = self._run(cli, request, native_mcp=request.mcp, planted=request.conversation)
        ending = classify_run(process, run, timeout=request.timeout)
        if request.mcp is not None and not (process.timed_out or process.interrupted):
            missing = mcp_check.servers_without_tools(run, mcp_check.server_names(request.mcp.data))
            if missing:
                ending = AgentEnding(AgentStatus.SETUP_ERROR, mcp_check.unusable_message(missing))
        activated = undeclared = None
        if run.event_count:
            activated = activated_skills(
                run.tool_calls(), request.skills, cwd=sandbox.workdir, home=sandbox.home
            )
            undeclared = undeclared_skills(
                run.tool_calls(),
                request.skills,
                cwd=sandbox.workdir,
                home=sandbox.home,
                skills_root=skills_root(sandbox),
            )
        return AttemptResult(
            status=ending.status,
            final_answer=final_answer(run),
            transcript=build_transcript(run),
            activated=activated,
            undeclared=undeclared,
            user_setup=user,
            usage=run.usage,
            model=run.model or request.model,
            error=ending.error,
            exit_code=process.returncode,
            duration_seconds=round(process.duration_seconds, 3),
        )

    # -- judging --------------------------------------------------------------------------
    def prompt(self, cli: Path, request: PromptRequest) -> PromptResult:
        """One tool-less, skill-less question for a judge."""
        process, run = self._run(cli, request, JUDGE_ARGS)
        ending = classify_run(process, run, timeout=request.timeout)
        text = final_answer(run)
        if ending.completed and text is None:
            ending = AgentEnding(AgentStatus.INFRA_ERROR, "pi's model returned an empty answer")
        return ending.prompt_result(text, model=run.model or request.model, usage=run.usage)
