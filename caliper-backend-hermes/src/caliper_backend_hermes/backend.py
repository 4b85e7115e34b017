"""The ``hermes`` backend: runs Nous Research's Hermes Agent as a neutral, one-shot agent."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from caliper.plugin import CaliperError, ProcessResult, run_process
from caliper.plugin.agent_ending import AgentEnding, stopped_early
from caliper.plugin.attempt import (
    AgentStatus,
    AttemptRequest,
    AttemptResult,
    AttemptSandbox,
    PromptRequest,
    PromptResult,
)
from caliper.plugin.backend import Backend, CliUpdate
from caliper.plugin.conversation import PlantedConversation
from caliper_backend_hermes import conversation
from caliper_backend_hermes.errors import (
    classify_api_failure,
    classify_no_session,
    session_error_lines,
)
from caliper_backend_hermes.events import (
    Session,
    activated_skills,
    parse_export,
    transcript,
    undeclared_skills,
)
from caliper_backend_hermes.home import (
    finish_home,
    load_user_setup,
    passed_variables,
    read_user_config,
    seed_home,
    user_hermes_home,
)
from caliper_backend_hermes.invocation import (
    chat_command,
    console_script_python,
    model_options,
    split_model,
)
from caliper_backend_hermes.mcp_check import (
    read_agent_log,
    unusable_message,
    unusable_servers,
)
from caliper_backend_hermes.probe import has_mcp_support, installed_version
from caliper_backend_hermes.readiness import check_provider
from caliper_backend_hermes.skills import hermes_home

QUIET_OPTIONS = ("--quiet", "--yolo", "--ignore-rules")
"""Print only the answer; never wait for an approval; skip AGENTS.md, SOUL.md and memory."""
JUDGE_TOOLSETS = "context_engine"
"""A toolset with no tools of its own: the judge model answers from the prompt alone."""
EXPORT_TIMEOUT = 60.0
UPDATE_NOTE = "Hermes updates itself: run `hermes update` (caliper does not update it)."
MCP_MISSING = (
    "The spec declares mcp: servers, but the Hermes at {cli} was installed without MCP "
    "support, so it would silently ignore them. Install it with "
    "`pip install 'hermes-agent[mcp]'` (in Hermes' own environment) and run again."
)


@attrs.frozen
class _Run:
    """One Hermes process: how it exited, the session it recorded, and why it failed (if so)."""

    process: ProcessResult | None
    session: Session | None
    failure: AgentEnding | None
    planted: int = 0
    """How many messages of ``session`` were planted from the task's ``history:``."""


_SESSION_LINE = re.compile(r"^session_id:\s*(\S+)\s*$", re.M)


@attrs.frozen
class SeededHermesHome:
    """What :meth:`HermesBackend.prepare_home` left in a sandbox: the attempt's
    ``HERMES_HOME`` and the user's ``config.yaml`` as read (made neutral when the run writes
    its own)."""

    home: Path
    user_config: Mapping[str, Any]


class HermesBackend(Backend[SeededHermesHome]):
    """Hermes Agent (``hermes``), isolated per attempt in its own ``HERMES_HOME``."""

    id = "hermes"
    cli_name = "hermes"
    install_hint = "pip install hermes-agent  (or Nous Research's install script)"

    def tool_vocabulary(self) -> Mapping[str, Sequence[str]]:
        """Hermes' tools: ``terminal``, ``read_file``, ``write_file``, ``patch``, ``skill_view``."""
        return {
            "shell": ("terminal",),
            "read": ("read_file",),
            "write": ("write_file",),
            "edit": ("patch",),
            "skill": ("skill_view",),
        }

    def supports_mcp(self) -> bool:
        """Yes: the spec's ``mcp:`` servers reach the agent."""
        return True

    def supports_user_customizations(self) -> bool:
        """Yes: ``--user-customizations`` loads the user's own setup."""
        return True

    def supports_conversation(self) -> bool:
        """True when ``hermes`` is Hermes' Python console script, whose interpreter caliper
        uses to plant the conversation through Hermes' own session store."""
        cli = self.find_cli()
        return cli is not None and console_script_python(cli) is not None

    def conversation_refusal(self) -> str | None:
        """Why this Hermes cannot start from a planted conversation."""
        if self.supports_conversation():
            return None
        return (
            "Hermes keeps its sessions in a SQLite database; caliper plants a conversation through "
            "Hermes' own session store, which needs `hermes` to be the Python console script "
            "inside Hermes' virtualenv (point HERMES_CLI_PATH at it)."
        )

    def cli_version(self, path: Path) -> str | None:
        """The ``hermes-agent`` package version, read from its metadata (no network).

        ``hermes --version`` is avoided on purpose: it asks PyPI for the newest release.
        """
        return installed_version(path)

    # attempts ------------------------------------------------------------------------------
    def check_ready(self, model: str | None, real_home: Path) -> None:
        """A malformed ``hermes:<provider>/<model>`` fails before any attempt (exit 2), and so
        does a Hermes with no provider configured (exit 3: it would stop at its first-run
        setup in every attempt)."""
        split_model(model)
        check_provider(self.find_cli(), real_home)

    def update_info(self, check_latest: bool) -> CliUpdate:
        """The installed Hermes version; Hermes updates itself, so caliper only reports.

        ``check_latest`` is ignored: asking PyPI is what ``hermes update`` does, not caliper.
        """
        info = self.cli_info()
        return CliUpdate(
            backend=self.id,
            installed=info.version,
            latest=None,
            update_command="hermes update",
            self_updating=True,
            note=UPDATE_NOTE if info.found else info.error,
        )

    def attempt(self, cli: Path, request: AttemptRequest) -> AttemptResult:
        """Run ``hermes chat --query`` once, then read the session Hermes recorded."""
        mcp_servers = (request.mcp.data or {}).get("mcp_servers") if request.mcp else None
        user = None
        if request.user_customizations:
            source = user_hermes_home(request.sandbox.real_home)
            user = load_user_setup(hermes_home(request.sandbox), source)
        run = self._run(
            cli,
            request.sandbox,
            request.prompt,
            request.model,
            timeout=request.timeout,
            mcp_servers=mcp_servers,
            mcp_env=request.mcp.env if request.mcp else {},
            planted=request.conversation,
        )
        if run.session is not None and run.planted:
            messages = conversation.without_planted(run.session.messages, run.planted)
            run = attrs.evolve(run, session=attrs.evolve(run.session, messages=messages))
        if run.session is None:
            failure = run.failure or AgentEnding(
                AgentStatus.INFRA_ERROR, "Hermes recorded nothing."
            )
            return AttemptResult(
                status=failure.status,
                error=failure.error,
                exit_code=run.process.returncode if run.process else None,
                duration_seconds=run.process.duration_seconds if run.process else None,
            )
        turns = transcript(run.session.messages)
        usable = run.failure is None or run.failure.status is AgentStatus.SETUP_ERROR
        loaded = activated_skills(turns, request.skills)
        return AttemptResult(
            status=run.failure.status if run.failure else AgentStatus.COMPLETED,
            final_answer=None if run.failure else run.session.final_answer,
            transcript=turns,
            # a cut-short session still shows the loads it made (never a made-up "none")
            activated=loaded if usable else (loaded or None),
            undeclared=undeclared_skills(turns, request.skills) if usable else None,
            user_setup=user,
            usage=run.session.usage,
            model=run.session.model,
            error=run.failure.error if run.failure else None,
            exit_code=run.process.returncode if run.process else None,
            duration_seconds=run.process.duration_seconds if run.process else None,
        )

    def prompt(self, cli: Path, request: PromptRequest) -> PromptResult:
        """Ask Hermes' model one question with no tools and no skills; return its answer."""
        run = self._run(
            cli,
            request.sandbox,
            request.prompt,
            request.model,
            timeout=request.timeout,
            options=(f"--toolsets={JUDGE_TOOLSETS}",),
        )
        if run.failure is not None or run.session is None:
            failure = run.failure or AgentEnding(
                AgentStatus.INFRA_ERROR, "Hermes recorded nothing."
            )
            return PromptResult(status=failure.status, error=failure.error)
        return PromptResult(
            status=AgentStatus.COMPLETED,
            text=run.session.final_answer,
            model=run.session.model,
            usage=run.session.usage,
        )

    # steps ---------------------------------------------------------------------------------
    def _run(
        self,
        cli: Path,
        sandbox: AttemptSandbox,
        prompt: str,
        model: str | None,
        *,
        timeout: float,
        options: Sequence[str] = (),
        mcp_servers: Mapping[str, Any] | None = None,
        mcp_env: Mapping[str, str] | None = None,
        planted: PlantedConversation | None = None,
    ) -> _Run:
        """Prepare the home, run Hermes once, export its session and judge how it ended."""
        if mcp_servers and not has_mcp_support(cli):
            return _Run(
                None, None, AgentEnding(AgentStatus.SETUP_ERROR, MCP_MISSING.format(cli=cli))
            )
        try:
            home, env = self._prepare(cli, sandbox, mcp_servers)
            env.update(mcp_env or {})
            arguments = [*QUIET_OPTIONS, *options, *model_options(model)]
            planted_count = 0
            if planted is not None:
                session_id, planted_count = conversation.plant_session(
                    cli, planted, home, env, sandbox.workdir
                )
                arguments += conversation.resume_options(session_id)
            launch = chat_command(cli, prompt, arguments)
        except CaliperError as exc:
            return _Run(None, None, AgentEnding(AgentStatus.SETUP_ERROR, exc.render()))
        process = run_process(
            launch.argv,
            env=env,
            cwd=sandbox.workdir,
            timeout=timeout,
            stdin_text=launch.stdin_text or "",
        )
        early = stopped_early(process, agent="Hermes", timeout=timeout)
        if early is not None:
            return _Run(process, None, early)
        session = self._export(cli, env, sandbox, home, process)
        failure = None
        if mcp_servers and session is not None:
            failure = mcp_failure(home, mcp_servers, secrets=(mcp_env or {}).values())
        outcome = _Run(process, session, failure or self._failure(process, session, home))
        return attrs.evolve(outcome, planted=planted_count)

    def prepare_home(self, sandbox: AttemptSandbox) -> SeededHermesHome:
        """The attempt's ``HERMES_HOME`` with the user's login files and Hermes' own marks
        (attempts and judge calls alike), and the user's config read for the run to finish.

        ``config.yaml`` depends on the run's MCP servers and skills, and the version stamp on
        the CLI the run uses, so the run writes those (:func:`home.finish_home`).
        """
        home = hermes_home(sandbox)
        source = user_hermes_home(sandbox.real_home)
        seed_home(home, source)
        return SeededHermesHome(home=home, user_config=read_user_config(source))

    def _prepare(
        self, cli: Path, sandbox: AttemptSandbox, mcp_servers: Mapping[str, Any] | None
    ) -> tuple[Path, dict[str, str]]:
        """Finish the attempt's ``HERMES_HOME`` (seeded by :meth:`prepare_home`, ahead or now)
        and build the environment Hermes runs with."""
        seeded = self.seeded_home(sandbox)
        home = seeded.home
        finish_home(
            home, seeded.user_config, version=installed_version(cli), mcp_servers=mcp_servers
        )
        env = dict(sandbox.base_env)
        env.update(passed_variables(home / "config.yaml", os.environ))
        env.update(
            HOME=str(sandbox.home),
            HERMES_HOME=str(home),
            HERMES_DISABLE_LAZY_INSTALLS="1",
            PYTHONDONTWRITEBYTECODE="1",
            PYTHONUNBUFFERED="1",
            NO_COLOR="1",
            SUDO_PASSWORD="",
        )
        return home, env

    def _export(
        self,
        cli: Path,
        env: Mapping[str, str],
        sandbox: AttemptSandbox,
        home: Path,
        run: ProcessResult,
    ) -> Session | None:
        """The session Hermes recorded for this run, via ``hermes sessions export``."""
        if not (home / "state.db").exists():
            return None
        found = _SESSION_LINE.findall(run.stderr)
        session_id = found[-1] if found else None
        target = sandbox.private / "hermes-session.jsonl"
        argv = [str(cli), "sessions", "export", str(target)]
        if session_id:
            argv += ["--session-id", session_id]
        exported = run_process(argv, env=env, cwd=sandbox.workdir, timeout=EXPORT_TIMEOUT)
        try:
            text = target.read_text(encoding="utf-8") if exported.returncode == 0 else ""
        except OSError:
            text = ""
        finally:
            target.unlink(missing_ok=True)
        return parse_export(text, session_id)

    def _failure(
        self, run: ProcessResult, session: Session | None, home: Path
    ) -> AgentEnding | None:
        """``None`` when the run succeeded, else why it failed (never from the answer text)."""
        if session is None:
            if run.returncode == 0:
                return AgentEnding(
                    AgentStatus.INFRA_ERROR,
                    "Hermes exited normally but recorded no session to read the result from.",
                )
            return classify_no_session(run.returncode, run.stdout, run.stderr)
        if run.returncode == 0:
            return None
        lines = session_error_lines(home, session.id)
        return classify_api_failure(lines, run.stderr_tail())


def mcp_failure(
    hermes_home: Path, mcp_servers: Mapping[str, Any], *, secrets: Iterable[str] = ()
) -> AgentEnding | None:
    """A setup error naming every spec MCP server Hermes' log does not show connected.

    Resolved secret values (URLs, header values) are masked in what Hermes said.
    """
    unusable = unusable_servers(read_agent_log(hermes_home), mcp_servers)
    if not unusable:
        return None
    message = unusable_message(unusable)
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        message = message.replace(secret, "***")
    return AgentEnding(AgentStatus.SETUP_ERROR, message)
