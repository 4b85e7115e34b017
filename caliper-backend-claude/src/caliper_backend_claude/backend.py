"""The ``claude-code`` backend: runs Claude Code headlessly in an attempt's sandbox."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from caliper.plugin.agent_ending import AgentEnding
from caliper.plugin.attempt import (
    AgentStatus,
    AttemptRequest,
    AttemptResult,
    AttemptSandbox,
    PromptRequest,
    PromptResult,
)
from caliper.plugin.backend import Backend, CliUpdate, run_agent
from caliper_backend_claude import (
    errors,
    events,
    home,
    invocation,
    login,
    mcp,
    versions,
)

MODEL_ALIASES = frozenset({"opus", "sonnet", "haiku", "fable", "opusplan"})
"""Claude Code's own model aliases (``claude --model opus``)."""
_CLAUDE_MODEL = re.compile(r"^claude-", re.IGNORECASE)
SMALL_LISTING_BUDGET = 8_000
"""200k tokens x 4 characters x 1 %: the Claude 3 and 4 models up to ``*-4-6``."""
DEFAULT_LISTING_BUDGET = 30_000
"""1M tokens x 3 characters x 1 %: the default model, the aliases, ``claude-opus-4-7`` and
later (and any name the CLI does not know as a 200k model)."""
LONG_CONTEXT_LISTING_BUDGET = 40_000
"""1M tokens x 4 characters x 1 %: a ``[1m]`` model (e.g. ``claude-sonnet-4-5[1m]``)."""
MAX_LISTED_DESCRIPTION = 1536
"""Claude Code cuts each listed description at this many characters."""
_SMALL_CONTEXT_MODEL = re.compile(
    r"^claude-(?:(?:opus|sonnet)-4(?:-[56])?|haiku-4-5|3-\d+-[a-z]+|3-[a-z]+)"
    r"(?:-\d{8}|-latest)?$"
)
"""The model names the pinned CLI gives a 200k-token context (measured: ``claude-sonnet-4``,
``claude-sonnet-4-5``/``-4-6``, ``claude-opus-4-5``/``-4-6``, ``claude-haiku-4-5``,
``claude-3-7-sonnet-latest``)."""


class ClaudeCodeBackend(Backend[dict[str, str]]):
    """Anthropic's Claude Code CLI (``claude -p --output-format stream-json``)."""

    id = "claude-code"
    aliases = ("claude",)
    cli_name = "claude"
    install_hint = "npm install -g @anthropic-ai/claude-code"
    skill_listing_budget = SMALL_LISTING_BUDGET
    """The smallest budget (200k-context models); :meth:`skill_listing_budget_for` gives
    each model's."""
    skill_listing_overflow = "the skills past it are listed by name only"
    default_judge_model = "claude-sonnet-5"
    """Pinned for judge calls, so a stale default in the user's Claude CLI does not decide how
    attempts are graded (``--judge-model claude-code:<model>`` or ``CALIPER_JUDGE_MODEL``
    choose another)."""

    def hides_model_disabled_skills(self) -> bool:
        """Yes: Claude Code lists no `disable-model-invocation` skill and refuses its Skill
        call."""
        return True

    def tool_vocabulary(self) -> Mapping[str, Sequence[str]]:
        """Claude Code's own tools: ``Bash``, ``Read``, ``Write``, ``Edit`` (and ``MultiEdit``,
        ``NotebookEdit``), ``Skill``.
        """
        return {
            "shell": ("Bash",),
            "read": ("Read",),
            "write": ("Write",),
            "edit": ("Edit", "MultiEdit", "NotebookEdit"),
            "skill": ("Skill",),
        }

    def supports_mcp(self) -> bool:
        """Yes: the spec's ``mcp:`` servers reach the agent."""
        return True

    def supports_user_customizations(self) -> bool:
        """Yes: ``--user-customizations`` loads the user's own setup."""
        return True

    def supports_conversation(self) -> bool:
        """Yes: a task's planted conversation (``history:``) is stored as a session and resumed."""
        return True

    def skill_listing_budget_for(self, model: str | None) -> int | None:
        """Claude Code 2.1.332 lists skills within 1% of the model's context window, counted
        at the model's characters per token (its bundled ``skill listing`` code; measured with
        the scripted server, see docs/backends/claude-code.md): 8,000 characters for the
        200k-context models (the Claude 3 and 4 models up to ``*-4-6``), 40,000 for a
        ``[1m]`` model (1M tokens at 4 characters), 30,000 for every other name, its
        default and the ``opus``/``sonnet``/``haiku`` aliases (1M tokens at 3 characters)."""
        name = (model or "").strip().lower()
        if name.endswith("[1m]"):
            return LONG_CONTEXT_LISTING_BUDGET
        if _SMALL_CONTEXT_MODEL.match(name):
            return SMALL_LISTING_BUDGET
        return DEFAULT_LISTING_BUDGET

    def skill_listing_budgets(self) -> dict[str, int]:
        return {
            "claude-sonnet-4-5 and the other 200k-context models": SMALL_LISTING_BUDGET,
            "its default, the opus/sonnet/haiku aliases and claude-*-5 models": (
                DEFAULT_LISTING_BUDGET
            ),
            "a [1m] model": LONG_CONTEXT_LISTING_BUDGET,
        }

    def skill_listing_chars(self, skills: Sequence[tuple[str, str]]) -> int:
        """One ``- name: description`` line per skill, each description cut at 1,536
        characters, lines joined by newlines (as Claude Code 2.1.332 counts)."""
        if not skills:
            return 0
        lines = sum(len(name) + min(len(text), MAX_LISTED_DESCRIPTION) + 4 for name, text in skills)
        return lines + len(skills) - 1

    def claims_model(self, model: str) -> bool:
        """``claude-*`` model ids and Claude Code's own aliases (``opus``, ``sonnet``, …)."""
        name = model.strip()
        return bool(_CLAUDE_MODEL.match(name)) or name.lower() in MODEL_ALIASES

    def cli_version(self, path: Path) -> str | None:
        """``claude --version`` run with a throw-away HOME and a short timeout."""
        return versions.installed_version(path)

    def update_info(self, check_latest: bool) -> CliUpdate:
        """Installed and newest Claude Code versions (npm is asked only when ``check_latest``)."""
        return self.npm_update_info(versions.NPM_PACKAGE, check_latest)

    def check_ready(self, model: str | None, real_home: Path) -> None:
        """Claude Code must be logged in (a subscription login, an API key or a token): asked
        of ``claude auth status`` in a sandbox seeded as an attempt's, before any attempt."""
        login.check_login(self.find_cli(), real_home)

    def prepare_home(self, sandbox: AttemptSandbox) -> dict[str, str]:
        """Authentication and caliper's settings in the sandbox HOME (attempts and judge calls
        alike); the forwarded ``env`` of the user's settings, for :func:`home.build_env`."""
        return home.seed_home(sandbox)

    def attempt(self, cli: Path, request: AttemptRequest) -> AttemptResult:
        """One headless agent run in the sandbox; the prompt goes to stdin."""
        settings_env = self._settings_env(request.sandbox)
        env = home.build_env(request.sandbox, settings_env)
        mcp_argv: tuple[str, ...] = ()
        if request.mcp is not None:
            mcp_argv = tuple(request.mcp.argv)
            env.update(request.mcp.env)
        user = None
        if request.user_customizations:
            user = home.load_user_setup(request.sandbox, declared_mcp=request.mcp_names)
            mcp_argv += user.mcp_argv
            home.with_bundled_skills(env)
        argv = invocation.attempt_argv(cli, model=request.model, mcp_argv=mcp_argv)
        if request.conversation is not None:
            # imported here: only a task started from a planted conversation needs it
            from caliper_backend_claude import conversation

            argv += conversation.resume_argv(
                conversation.plant_session(request.conversation, request.sandbox)
            )
        process = run_agent(argv, env, request)
        parsed = events.parse_stream(process.stdout)
        ending = errors.classify(process, parsed, timeout=request.timeout)
        unavailable = mcp.unavailable_servers(parsed.init) if request.mcp is not None else []
        if unavailable and ending.status in (AgentStatus.COMPLETED, AgentStatus.TASK_FAILED):
            ending = AgentEnding(AgentStatus.SETUP_ERROR, mcp.unavailable_message(unavailable))
        installed = [skill.name for skill in request.skills]
        undeclared = events.undeclared_skills(parsed, installed)
        built_in: list[str] | None = None
        if user is not None:
            split = events.outside_loads(parsed, installed, user.skill_names)
            undeclared, built_in = split if split is not None else (None, None)
        return AttemptResult(
            status=ending.status,
            final_answer=parsed.final_answer,
            transcript=tuple(parsed.turns),
            activated=events.activated_skills(parsed, installed),
            undeclared=undeclared,
            built_in=built_in,
            user_setup=user.setup if user else None,
            usage=parsed.usage,
            model=parsed.model or request.model,
            error=ending.error,
            exit_code=process.returncode,
            duration_seconds=process.duration_seconds,
            retry_after=errors.retry_after(parsed, ending.status),
        )

    def _settings_env(self, sandbox: AttemptSandbox) -> dict[str, str]:
        return dict(self.seeded_home(sandbox))

    def prompt(self, cli: Path, request: PromptRequest) -> PromptResult:
        """One tool-less question for a judge, isolated like an attempt."""
        settings_env = self._settings_env(request.sandbox)
        env = home.build_env(request.sandbox, settings_env)
        process = run_agent(invocation.prompt_argv(cli, model=request.model), env, request)
        parsed = events.parse_stream(process.stdout)
        ending = errors.classify(process, parsed, timeout=request.timeout)
        return ending.prompt_result(
            parsed.final_answer, model=parsed.model or request.model, usage=parsed.usage
        )
