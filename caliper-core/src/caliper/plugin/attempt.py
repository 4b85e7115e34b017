"""What the runner hands a backend for one attempt, and what the backend hands back.

These attrs classes are the contract between the core and every backend plugin. They carry
no behaviour beyond small conveniences, so a backend can build them from any CLI's output.
"""

from __future__ import annotations

import enum
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.plugin.conversation import PlantedConversation


@attrs_classes.frozen
class Usage:
    """Token volume of one agent run (an attempt or a judge call), split four ways that never
    overlap, and its cost in money when the provider reported it.

    ``input_tokens`` excludes cached input, so ``total_tokens`` never double-counts. Backends
    whose CLI reports cached tokens inside the input count must subtract them. ``cost_usd`` is
    filled only when the model's provider reported it (judge calls through an API); saved, it
    appears only when known, so an attempt's usage keeps its four token fields.
    :class:`caliper.plugin.judge.JudgeUsage` is this same class.
    """

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_creation_tokens: int | None = None
    cost_usd: float | None = None

    @property
    def total_tokens(self) -> int | None:
        """The sum of the four token counts (``None`` when none is known)."""
        fresh, output = self.input_tokens, self.output_tokens
        read, written = self.cache_read_tokens, self.cache_creation_tokens
        if fresh is None and output is None and read is None and written is None:
            return None
        return (fresh or 0) + (output or 0) + (read or 0) + (written or 0)

    def data(self) -> dict[str, int | float | None]:
        """The saved form: the four token counts, and ``cost_usd`` only when it is known."""
        data: dict[str, int | float | None] = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_creation_tokens": self.cache_creation_tokens,
        }
        if self.cost_usd is not None:
            data["cost_usd"] = self.cost_usd
        return data

    def __add__(self, other: Usage) -> Usage:
        """Both runs' usage together (a part stays ``None`` only when both lack it)."""

        def add(a: int | None, b: int | None) -> int | None:
            return None if a is None and b is None else (a or 0) + (b or 0)

        cost = (
            None
            if self.cost_usd is None and other.cost_usd is None
            else (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        )
        return Usage(
            add(self.input_tokens, other.input_tokens),
            add(self.output_tokens, other.output_tokens),
            add(self.cache_read_tokens, other.cache_read_tokens),
            add(self.cache_creation_tokens, other.cache_creation_tokens),
            cost,
        )


@attrs_classes.frozen
class Turn:
    """One step of a transcript, in the order the agent produced it.

    ``role`` is ``"assistant"`` (text the model wrote), ``"tool"`` (a tool call with its input
    and, once known, its output) or ``"user"`` (text injected on the user's side).
    """

    role: str
    content: str | None = None
    tool_name: str | None = None
    tool_input: Any = None
    tool_output: str | None = None
    is_error: bool | None = None


class AgentStatus(str, enum.Enum):
    """How the agent CLI's run ended, as the backend read it from structured output.

    Never decided from the words of the agent's answer.
    """

    COMPLETED = "completed"
    """The agent finished; the judges decide whether it did the task."""
    TASK_FAILED = "task_failed"
    """The agent stopped for a reason that is the task's fault (e.g. it ran out of turns)."""
    INFRA_ERROR = "infra_error"
    """The harness or provider failed: rate limit, overload, crash, garbage output."""
    TIMEOUT = "timeout"
    """The attempt exceeded its time budget and was killed."""
    SETUP_ERROR = "setup_error"
    """The CLI cannot work at all (no login, bad key, missing binary): stop the run."""


@attrs_classes.frozen
class InstalledSkill:
    """A neighbourhood skill as installed for one attempt.

    ``skill_file`` is the absolute path of the installed ``SKILL.md``; backends whose agent has
    no skill tool detect activation by the agent reading exactly this file.
    """

    name: str
    description: str
    skill_dir: Path

    @property
    def skill_file(self) -> Path:
        """``<skill_dir>/SKILL.md``."""
        return self.skill_dir / "SKILL.md"


@attrs_classes.frozen
class SeededHome:
    """A sandbox HOME seeded ahead by one backend, and what its ``prepare_home`` returned."""

    backend_id: str
    state: Any = None


@attrs_classes.frozen
class AttemptSandbox:
    """The private, throw-away world one attempt (or one judge call) runs in.

    ``home`` is the isolated HOME the agent sees; ``workdir`` its working directory; ``private``
    a 0700 folder for generated config and resolved secrets (created on first use, see
    :attr:`private`); ``real_home`` the user's real home, which a backend may only *read* to
    seed authentication. ``base_env`` is the minimal environment (PATH with the spec's
    ``extra_path`` first, locale, TERM) a backend extends.
    """

    root: Path
    home: Path
    workdir: Path
    _private: Path = attrs.field(alias="private")
    real_home: Path
    base_env: Mapping[str, str]
    seeded: SeededHome | None = None
    """What a backend's :meth:`~caliper.plugin.backend.Backend.prepare_home` gave when the runner
    seeded this HOME ahead of the run (``None``: not seeded yet; the backend seeds it itself)."""

    @property
    def private(self) -> Path:
        """The 0700 folder for generated config and resolved secrets, created when first asked
        for: most attempts write nothing there, and each folder created is an inode on the
        temp folder's disk."""
        path = self._private
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            return path
        path.chmod(0o700)  # whatever the umask
        return path


@attrs_classes.frozen
class McpServerConfig:
    """One MCP server with its ``${VAR}`` references already resolved (runtime only).

    Instances live in memory and in the attempt's private folder; they are never saved.
    """

    name: str
    transport: str  # "stdio", "http" or "sse"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    url: str | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)


@attrs_classes.frozen
class NativeMcpConfig:
    """What an MCP translator produced: extra CLI arguments, environment and opaque data.

    A backend applies it in its own way (``--mcp-config FILE``, a TOML table, a YAML block).
    """

    argv: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    data: Any = None


@attrs_classes.frozen
class UserSetup:
    """What of the user's own agent setup one attempt loaded, by name (never contents).

    Filled by a backend when ``AttemptRequest.user_customizations`` is on: ``skills`` the
    user-level skills copied in (a declared skill of the same name wins), ``rules`` the
    user-scope rules files (``~/.claude/CLAUDE.md``, ``~/.codex/AGENTS.md``), ``settings`` the
    settings files and the keys taken from them (``settings.json: env, hooks``), ``mcp`` the
    user's MCP servers (a declared server of the same name wins). ``not_loaded`` says, one
    sentence each, what the backend could not honour. Session history and memory are never
    loaded.
    """

    skills: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()
    mcp: tuple[str, ...] = ()
    not_loaded: tuple[str, ...] = ()

    def as_lists(self) -> dict[str, list[str]]:
        """The names per kind, for the saved run (kinds with nothing loaded included)."""
        return {
            "skills": list(self.skills),
            "rules": list(self.rules),
            "settings": list(self.settings),
            "mcp": list(self.mcp),
            "not_loaded": list(self.not_loaded),
        }


@attrs_classes.frozen
class AttemptRequest:
    """Everything a backend needs to run the agent once on a task prompt.

    ``user_customizations`` asks the backend to also load what the user's own CLI would load
    by itself (see :class:`UserSetup`); off, the attempt sees only caliper's setup.
    """

    prompt: str
    model: str | None
    sandbox: AttemptSandbox
    timeout: float
    skills: Sequence[InstalledSkill] = ()
    mcp: NativeMcpConfig | None = None
    conversation: PlantedConversation | None = None
    """The planted conversation to resume before ``prompt`` (the task's ``history:``; only for
    backends whose ``supports_conversation`` is true, the runner refuses the spec on the
    others)."""
    user_customizations: bool = False
    mcp_names: Sequence[str] = ()
    """The names of the spec's servers in ``mcp`` (they win over the user's own)."""
    cli_path: Path | None = None
    """The agent CLI the run's pre-flight found (``Backend.find_cli``), so a backend does not
    look it up again for every attempt; ``None`` when the caller did not look (the backend's
    :meth:`~caliper.plugin.backend.Backend.cli_for` then finds it)."""

    @property
    def history(self) -> PlantedConversation | None:
        """The former name of :attr:`conversation`, read-only; warns (goes in caliper 2.0)."""
        warnings.warn(
            "AttemptRequest.history is now AttemptRequest.conversation; the old name goes in "
            "caliper 2.0",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.conversation


@attrs_classes.frozen
class AttemptResult:
    """What a backend observed from one agent run.

    ``activated`` lists the installed skills the model chose to load, in order, or is ``None``
    when nothing was observable (never a made-up empty list). ``model`` is the concrete model
    the CLI reported. ``error`` explains any status other than ``COMPLETED``; for crashes it
    carries the tail of stderr. Only a load that succeeded counts (a refused or failed read of
    a skill is not an activation). ``undeclared`` lists skills the model loaded successfully
    although the spec did not declare them (e.g. a ``SKILL.md`` nested inside a declared
    skill's folder), by name; ``None`` when not observed. ``built_in`` lists skills shipped
    inside the agent CLI itself that the model loaded (kept apart from both: they are seen,
    never scored). ``user_setup`` is what of the user's own setup was loaded, when asked.
    """

    status: AgentStatus
    final_answer: str | None = None
    transcript: Sequence[Turn] = ()
    activated: Sequence[str] | None = None
    undeclared: Sequence[str] | None = None
    usage: Usage | None = None
    model: str | None = None
    error: str | None = None
    exit_code: int | None = None
    duration_seconds: float | None = None
    built_in: Sequence[str] | None = None
    user_setup: UserSetup | None = None
    retry_after: float | None = None
    """Seconds the provider asked to wait before trying again (an HTTP ``Retry-After`` the
    CLI reported with a rate limit or overload), ``None`` when it said nothing. The runner's
    automatic retry (``--retries``) waits that long instead of its own backoff."""


@attrs_classes.frozen
class PromptRequest:
    """A single question for the backend's model, used by LLM judges.

    The backend runs it isolated like an attempt, with as few tools as its CLI allows. The
    prompt may be large: backends must pass it through stdin or a file, never argv.
    """

    prompt: str
    model: str | None
    sandbox: AttemptSandbox
    timeout: float
    cli_path: Path | None = None
    """The agent CLI to run, when the caller already found it (see ``AttemptRequest``)."""


@attrs_classes.frozen
class PromptResult:
    """The model's answer to a ``PromptRequest``.

    ``status`` other than ``COMPLETED`` means there is no usable answer; ``error`` then says
    what the CLI reported (auth refusal, rate limit, timeout).
    """

    status: AgentStatus
    text: str | None = None
    model: str | None = None
    usage: Usage | None = None
    error: str | None = None
