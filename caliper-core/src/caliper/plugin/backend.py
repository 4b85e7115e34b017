"""Base classes for what backend plugins register: backends, skill installers, MCP translators.

A plugin subclasses these and returns instances from its ``register_*`` hook. Behaviour lives
on the objects; the hooks only hand them to the core.
"""

from __future__ import annotations

import abc
import os
import shutil
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from caliper.errors import CaliperError
from caliper.plugin.attempt import AgentStatus, AttemptResult, InstalledSkill, PromptResult
from caliper.plugin.skill_listing import LISTING_CHECK_FLOOR as LISTING_CHECK_FLOOR  # re-exported
from caliper.plugin.skill_listing import listing_chars as listing_chars  # re-exported
from caliper.system import attrs_classes
from caliper.system.process import run_process

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from caliper.plugin.attempt import (
        AttemptRequest,
        AttemptSandbox,
        McpServerConfig,
        NativeMcpConfig,
        PromptRequest,
    )
    from caliper.plugin.skills import ResolvedSkill
    from caliper.plugin.tools import ToolNames
    from caliper.system.process import ProcessResult


HomeT = TypeVar("HomeT")
"""What a backend's :meth:`Backend.prepare_home` returns (``Backend[HomeT]``)."""


@attrs_classes.frozen
class CliInfo:
    """Where a backend's agent CLI was found and which version it is."""

    path: Path | None
    version: str | None = None
    error: str | None = None

    @property
    def found(self) -> bool:
        """Whether the CLI was found."""
        return self.path is not None


@attrs_classes.frozen
class CliUpdate:
    """A backend's answer to ``caliper update-cli``: installed vs newest, and how to update.

    ``self_updating`` is true for CLIs that update themselves (caliper then only reports).
    """

    backend: str
    installed: str | None
    latest: str | None
    update_command: str | None
    self_updating: bool = False
    note: str | None = None

    @property
    def outdated(self) -> bool:
        """Whether a newer version than the installed one is known."""
        return bool(self.installed and self.latest and self.installed != self.latest)


class Backend(abc.ABC, Generic[HomeT]):
    """An agent CLI caliper can run attempts through.

    Subclasses set the class attributes and implement :meth:`attempt` (and :meth:`prompt` for
    judging): the template methods :meth:`run_attempt` and :meth:`run_prompt` find the CLI
    once (the path the run's pre-flight found, carried in the request) and turn a missing CLI
    into a ``SETUP_ERROR`` result, so a backend only says what is about its agent. A backend
    may still override ``run_attempt``/``run_prompt`` whole. ``id`` is the public name (the
    entry-point name in ``caliper.backends``);
    ``aliases`` are extra names ``--model`` accepts; ``cli_name`` the executable looked up on
    PATH; ``install_hint`` the command that installs the CLI.

    What the agent can do is asked of methods, so the answer may depend on the installed CLI:
    :meth:`supports_mcp` (a spec's ``mcp:`` block), :meth:`supports_conversation` (a task
    started from a planted conversation, ``history:``) and :meth:`supports_user_customizations`
    (``--user-customizations``), each with a ``*_refusal`` method saying why not and what to do
    instead, and :meth:`hides_model_disabled_skills`. A subclass written for the older class
    attributes (``supports_mcp = True``) still works: its constants become these methods,
    with a :class:`DeprecationWarning`. So does one that defines the former names
    ``supports_history`` and ``history_refusal``: they answer for
    :meth:`supports_conversation` and :meth:`conversation_refusal`, warned when called.
    """

    id: str
    aliases: Sequence[str] = ()
    default_model: str | None = None
    cli_name: str
    install_hint: str = ""
    default_max_concurrent: int | None = None
    """How many attempts of this backend may run at once unless ``--max-concurrent`` says
    otherwise (e.g. a provider's rate limit); ``None``: only ``--workers`` limits it."""
    skill_listing_budget: int | None = None
    """How many characters of skill listing the agent shows the model in full, or ``None``.

    Agents list every installed skill (name and description) in the system prompt, some
    within a character budget: past it, Claude Code lists the remaining skills by name only
    and Codex shortens every description. ``None`` means the agent shows every description
    whole, however many skills there are. The figure is measured against the pinned CLI
    (see the backend's docs page); :meth:`skill_listing_chars` says how the agent counts.
    ``caliper validate`` only consults backends for listings over
    :data:`LISTING_CHECK_FLOOR` characters, so a budget below that is checked at run time only.
    """
    skill_listing_overflow: str = "some skills are shown to the model without their description"
    """What the agent does past its budget, in a few words (for the warning)."""
    default_judge_model: str | None = None
    """The model judge calls (``run_prompt``) pin when the judge engine names none.

    ``None`` leaves it to the CLI's own default. Pin one when that default drifts with the
    installed CLI or the user's config, so it does not decide how attempts are graded; the
    ``CALIPER_JUDGE_MODEL`` variable and ``--judge-model <backend>:<model>`` override it.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Turn capabilities a subclass still declares the older way (a class constant such as
        ``supports_mcp = True``, or a property) into the methods the core calls."""
        super().__init_subclass__(**kwargs)
        for name in (*CAPABILITIES, *RENAMED_CAPABILITIES):
            if name not in cls.__dict__:
                continue
            value = cls.__dict__[name]
            if isinstance(value, property) and value.fget is not None:
                getter = value.fget
            elif callable(value):
                continue
            else:
                getter = _constant(value)
            method = RENAMED_CAPABILITIES.get(name, name)
            warnings.warn(
                f"{cls.__name__}.{name} is declared as an attribute; caliper now calls "
                f"{method}() as a method: define `def {method}(self)` instead.",
                DeprecationWarning,
                stacklevel=3,  # the class statement (past ABCMeta.__new__)
            )
            setattr(cls, name, getter)
        for old, new in RENAMED_CAPABILITIES.items():
            if old in cls.__dict__ and new not in cls.__dict__:
                setattr(cls, new, _answered_by_former_name(old, new))

    def supports_mcp(self) -> bool:
        """Whether the agent can honour a spec's ``mcp:`` block. Default: no."""
        return False

    def mcp_refusal(self) -> str | None:
        """Why this backend cannot honour ``mcp:`` and what to do instead (when unsupported);
        ``None`` lets the core say it in general words."""
        return None

    def supports_conversation(self) -> bool:
        """Whether the backend can plant a task's conversation (its ``history:``) as a stored
        session and resume it (``AttemptRequest.conversation``). Default: no."""
        return False

    def conversation_refusal(self) -> str | None:
        """Why this backend cannot start a task from a planted conversation and what to do
        instead (when unsupported)."""
        return None

    def supports_history(self) -> bool:
        """The former name of :meth:`supports_conversation`; warns (goes in caliper 2.0)."""
        _warn_former_name(self, "supports_history", stacklevel=3)
        return _current_answer(self, "supports_conversation")

    def history_refusal(self) -> str | None:
        """The former name of :meth:`conversation_refusal`; warns (goes in caliper 2.0)."""
        _warn_former_name(self, "history_refusal", stacklevel=3)
        return _current_answer(self, "conversation_refusal")

    def supports_user_customizations(self) -> bool:
        """Whether ``--user-customizations`` can load the user's own CLI setup into attempts.
        Default: no."""
        return False

    def user_customizations_refusal(self) -> str | None:
        """Why this backend cannot load the user's setup, and what to do instead (when
        unsupported)."""
        return None

    def hides_model_disabled_skills(self) -> bool:
        """Whether the agent hides a skill whose ``SKILL.md`` says ``disable-model-invocation:
        true`` from the model (so the model can never load it). ``caliper run`` then refuses an
        ``activates:`` entry naming such a skill; ``caliper validate``, which knows no engine,
        warns. Set from the pinned CLI's own skill loader (see the backend's docs page).
        Default: no."""
        return False

    @property
    def cli_path_variable(self) -> str:
        """The environment variable that overrides where the CLI is found."""
        return self.cli_name.upper().replace("-", "_") + "_CLI_PATH"

    def find_cli(self) -> Path | None:
        """Locate the CLI: ``<NAME>_CLI_PATH`` first, then PATH. ``None`` when absent."""
        override = os.environ.get(self.cli_path_variable)
        if override:
            path = Path(override).expanduser()
            return path if path.exists() else None
        found = shutil.which(self.cli_name)
        return Path(found) if found else None

    def cli_info(self) -> CliInfo:
        """Find the CLI and ask its version without touching the network or the real home."""
        path = self.find_cli()
        if path is None:
            return CliInfo(path=None, error=self.missing_cli_message())
        return CliInfo(path=path, version=self.cli_version(path))

    def cli_version(self, path: Path) -> str | None:
        """The installed CLI's version string, or ``None`` when it cannot be read cheaply."""
        return None

    def missing_cli_message(self) -> str:
        """One sentence telling the user the CLI is missing and how to install it."""
        hint = f" Install it with `{self.install_hint}`" if self.install_hint else ""
        return (
            f"The {self.id} backend needs the `{self.cli_name}` CLI, which was not found on PATH "
            f"(or at ${self.cli_path_variable}).{hint}"
        )

    def check_ready(self, model: str | None, real_home: Path) -> None:
        """Raise a :class:`caliper.errors.CaliperError` when no attempt could possibly run.

        ``SetupError`` for configuration the user must fix (exit 3), ``UsageError`` for a
        malformed ``--model`` (exit 2).

        Called once per run, before any attempt is scheduled and after the CLI was found, so a
        missing default model or an unusable configuration is one message instead of k
        identical unusable attempts. Read only; the default accepts everything.
        """
        return None

    def skill_listing_chars(self, skills: Sequence[tuple[str, str]]) -> int:
        """Characters the listing of ``skills`` (``(name, description)`` pairs) takes, counted
        the way this agent counts them against :attr:`skill_listing_budget`.

        The default counts one ``- name: description`` line per skill.
        """
        return sum(len(name) + len(description) + 4 for name, description in skills)

    def skill_listing_budget_for(self, model: str | None) -> int | None:
        """The listing budget when the agent runs ``model`` (``None``: its default model).

        The default is :attr:`skill_listing_budget` for every model; an agent whose budget
        follows the model's context window (Claude Code) says so here.
        """
        return self.skill_listing_budget

    def skill_listing_budgets(self) -> Mapping[str, int]:
        """Every budget this agent applies, keyed by the models it applies to (a few words),
        smallest first: what ``caliper validate``, which knows no model, reports.

        The default is :attr:`skill_listing_budget` for every model (none without a budget).
        """
        budget = self.skill_listing_budget
        return {} if budget is None else {"every model": budget}

    def skill_listing_warning(
        self,
        skills: Sequence[tuple[str, str]],
        model: str | None = None,
        *,
        model_known: bool = True,
    ) -> str | None:
        """One sentence when ``skills`` overflow what this agent shows in full, else ``None``.

        ``model`` is the model a run uses (``None``: the agent's default). Without
        ``model_known`` (``caliper validate``) the sentence names every budget of
        :meth:`skill_listing_budgets` and appears when the listing passes the smallest.
        """
        if not skills:
            return None
        size = self.skill_listing_chars(skills)
        outcome = (
            f"{self.skill_listing_overflow}: activation then measures names rather than "
            "descriptions (see docs/backends)"
        )
        head = f"the {len(skills)} skills' listing takes about {size:,} characters"
        if model_known:
            budget = self.skill_listing_budget_for(model)
            if budget is None or size <= budget:
                return None
            shown = f"{self.id} with {model}" if model else self.id
            return f"{head} but {shown} shows about {budget:,} in full, so {outcome}"
        budgets = self.skill_listing_budgets()
        if not budgets or size <= min(budgets.values()):
            return None
        if len(budgets) == 1:
            (budget,) = budgets.values()
            return f"{head} but {self.id} shows about {budget:,} in full, so {outcome}"
        figures = "; ".join(f"{budget:,} for {models}" for models, budget in budgets.items())
        return (
            f"{head}; {self.id} shows in full about {figures}. With a model whose figure is "
            f"below the listing, {outcome}"
        )

    def check_mcp_servers(self, servers: Sequence[McpServerConfig], real_home: Path) -> None:
        """Raise :class:`caliper.errors.SetupError` naming a spec MCP server that cannot work.

        Called once per run, after ``check_ready`` and only when the spec has ``mcp:``
        servers (``${VAR}`` references already resolved: keep the values in memory or under a
        temporary folder you delete), before any attempt. An agent that silently runs on
        without a server it cannot reach should probe here, so the run stops before an attempt
        spends tokens without the server's tools. The default accepts every server (for
        agents that refuse to start without them, the attempt itself reports it).
        """
        return None

    def mcp_tool_name(self, server: str, tool: str) -> str:
        """The name a call to MCP ``tool`` on ``server`` carries in this backend's transcripts.

        The default, ``mcp__<server>__<tool>``, is the rule of Claude Code, Codex, pi and
        Hermes; a backend whose agent names MCP tools otherwise (opencode: ``<server>_<tool>``)
        overrides it, and the conformance kit checks the transcript against it.
        """
        return f"mcp__{server}__{tool}"

    def tool_vocabulary(self) -> Mapping[str, Sequence[str]]:
        """This agent's own tool names for each kind of the tool vocabulary.

        Keys are ``shell``, ``read``, ``write``, ``edit`` and ``skill``
        (:data:`caliper.plugin.tools.TOOL_KINDS`); a kind the agent has no tool for is left
        out (a ``tools:`` check naming it then cannot be decided on this backend). ``tools:``
        checks read transcripts through it, and the conformance kit checks it against the
        real CLI. Default: empty, which the kit fails.
        """
        return {}

    def shell_command(self, tool_input: Any) -> str | None:
        """The command a shell call with ``tool_input`` ran, as the user would type it.

        The default reads a ``command`` string; a backend whose agent wraps commands (Codex:
        ``/bin/bash -lc '<script>'``) returns the script. ``tools:`` ``input:`` patterns of
        shell calls are matched against it.
        """
        from caliper.plugin.tools import shell_command_of

        return shell_command_of(tool_input)

    def tool_names(self) -> ToolNames:
        """What ``tools:`` checks read: :meth:`tool_vocabulary`, :meth:`mcp_tool_name` and
        :meth:`shell_command` of this backend, in one object."""
        from caliper.plugin.tools import TOOL_KINDS, ToolNames

        vocabulary = {
            kind: tuple(str(n) for n in names)
            for kind, names in self.tool_vocabulary().items()
            if kind in TOOL_KINDS and names
        }
        return ToolNames(self.id, vocabulary, self.mcp_tool_name, self.shell_command)

    def claims_model(self, model: str) -> bool:
        """Whether a bare ``--model NAME`` belongs to this backend (e.g. ``gpt-`` for codex)."""
        return False

    def update_info(self, check_latest: bool) -> CliUpdate | None:
        """Installed vs newest CLI version and how to update, for ``caliper update-cli``.

        ``check_latest`` allows asking the network (npm, PyPI) for the newest release. The
        default answers ``None`` and the core then asks the ``cli_update_info`` hook (which
        third-party plugins written before this method may still implement); see
        :meth:`npm_update_info` for CLIs published on npm.
        """
        return None

    def npm_update_info(self, package: str, check_latest: bool) -> CliUpdate:
        """:meth:`update_info` for a CLI installed with ``npm install -g <package>``."""
        return npm_update(self.id, self.cli_info().version, package, check_latest)

    def cli_for(self, request: AttemptRequest | PromptRequest) -> Path | None:
        """The CLI to run: the path the run already found (``request.cli_path``), else
        :meth:`find_cli`. ``None`` when there is none."""
        return request.cli_path or self.find_cli()

    def prepare_home(self, sandbox: AttemptSandbox) -> HomeT:
        """Seed ``sandbox``'s fresh HOME for one run of this agent (an attempt or a judge
        call): authentication and the settings that keep the user's setup out. Return what
        :meth:`attempt`/:meth:`prompt` need from it (an environment, a path); they get it back
        from :meth:`seeded_home`.

        The runner may call this ahead, on another thread, while the previous attempt's agent
        runs (so it is off the path between two agent starts). It must therefore depend only
        on the sandbox (never on the prompt, the history or a task's ``setup:``), spawn
        nothing, and write only inside the sandbox. A backend that seeds declares what it
        returns as the type parameter (``class MyBackend(Backend[MySeed])``), and
        :meth:`seeded_home` gives back that type. Default: nothing to seed (``None``).
        """
        return cast("HomeT", None)

    def seeded_home(self, sandbox: AttemptSandbox) -> HomeT:
        """What :meth:`prepare_home` returned for ``sandbox``: the runner's call made ahead
        (``sandbox.seeded``) when this backend made it, else a call made now."""
        ready = sandbox.seeded
        if ready is not None and ready.backend_id == self.id:
            return cast("HomeT", ready.state)
        return self.prepare_home(sandbox)

    def run_attempt(self, request: AttemptRequest) -> AttemptResult:
        """Run the agent once on ``request.prompt`` inside ``request.sandbox``.

        The template: find the CLI (:meth:`cli_for`); a missing one is a ``SETUP_ERROR``
        result carrying :meth:`missing_cli_message`; otherwise :meth:`attempt` runs it.
        """
        cli = self.cli_for(request)
        if cli is None:
            return AttemptResult(status=AgentStatus.SETUP_ERROR, error=self.missing_cli_message())
        return self.attempt(cli, request)

    def attempt(self, cli: Path, request: AttemptRequest) -> AttemptResult:
        """Run the agent CLI at ``cli`` once on ``request`` (what a backend implements).

        Must kill the CLI's whole process group at ``request.timeout`` (use
        :func:`run_agent` or ``caliper.system.process.run_process``), must not read or write the
        user's real home except to copy authentication, and must classify errors from the
        CLI's structured output (into a :class:`caliper.plugin.agent_ending.AgentEnding`). A
        :class:`caliper.errors.SetupError` raised here ends the run with its message (exit 3).
        """
        raise NotImplementedError(f"The {self.id} backend implements no attempt method.")

    def run_prompt(self, request: PromptRequest) -> PromptResult:
        """Ask the model one question with as few tools as possible (used by LLM judges).

        A judge call needs no tools, skills, MCP servers or saved session: turn off every one
        the CLI lets you (Claude Code: ``--tools ""``), so the judge only reads the prompt.
        ``request.model`` is already the model to use (the engine's, or
        :attr:`default_judge_model`). The same template as :meth:`run_attempt`, around
        :meth:`prompt`.
        """
        if type(self).prompt is Backend.prompt:  # say "cannot judge" before "CLI missing"
            self.prompt(Path(), request)
        cli = self.cli_for(request)
        if cli is None:
            return PromptResult(status=AgentStatus.SETUP_ERROR, error=self.missing_cli_message())
        return self.prompt(cli, request)

    def prompt(self, cli: Path, request: PromptRequest) -> PromptResult:
        """Ask the CLI at ``cli`` one question (what a judge-capable backend implements).
        Not implemented: this backend cannot be a judge engine."""
        raise NotImplementedError(f"The {self.id} backend cannot be used as a judge engine.")


CAPABILITIES = (
    "supports_mcp",
    "mcp_refusal",
    "supports_conversation",
    "conversation_refusal",
    "supports_user_customizations",
    "user_customizations_refusal",
    "hides_model_disabled_skills",
)
"""The :class:`Backend` methods that say what the agent can do (and why not)."""

RENAMED_CAPABILITIES = {
    "supports_history": "supports_conversation",
    "history_refusal": "conversation_refusal",
}
"""Former capability names (kept until caliper 2.0) and the methods that replace them."""


def _warn_former_name(backend: Backend, old: str, stacklevel: int) -> None:
    """Warn that ``old`` is a former capability name, naming the method that replaces it."""
    new = RENAMED_CAPABILITIES[old]
    warnings.warn(
        f"{type(backend).__name__}.{old}() is now {new}(); the old name goes in caliper 2.0: "
        f"define and call `{new}` instead.",
        DeprecationWarning,
        stacklevel=stacklevel,
    )


def _answered_by_former_name(old: str, new: str) -> Callable[[Backend], Any]:
    """The ``new`` capability method of a class that defines only its former name ``old``:
    it asks ``old`` (the backend's own answer), warned."""

    def answer(self: Backend) -> Any:
        _warn_former_name(self, old, stacklevel=3)
        return getattr(self, old)()

    answer.__name__ = new
    answer.__qualname__ = f"Backend.{new}"
    answer.__doc__ = f"Answered by the backend's ``{old}`` (its former name)."
    answer._former_name = old  # type: ignore[attr-defined]
    return answer


def _current_answer(backend: Backend, new: str) -> Any:
    """What the capability ``new`` says for ``backend``, for a caller of its former name: the
    backend's own ``new``, or the default when ``new`` only forwards to the former name (a
    backend that overrides the former name and calls ``super()``)."""
    method = getattr(type(backend), new)
    if getattr(method, "_former_name", None) is not None:
        method = getattr(Backend, new)
    return method(backend)


def _constant(value: object) -> Callable[[Backend], Any]:
    """A capability method answering ``value`` (for a subclass that set it as a constant)."""

    def answer(self: Backend) -> Any:
        return value

    return answer


def npm_update(
    backend_id: str, installed: str | None, package: str, check_latest: bool
) -> CliUpdate:
    """Installed vs newest version of an npm-published CLI, and the npm command that updates.

    npm is asked (``npm view``) only when ``check_latest``; a failure becomes the note.
    """
    from caliper.plugin.cli_versions import npm_latest_version

    latest, note = npm_latest_version(package) if check_latest else (None, None)
    if installed is None:
        missing = f"The {backend_id} CLI is not installed or did not answer --version."
        note = " ".join(filter(None, [missing, note]))
    return CliUpdate(
        backend=backend_id,
        installed=installed,
        latest=latest,
        update_command=f"npm install -g {package}@latest",
        note=note,
    )


def run_agent(
    argv: Sequence[str], env: Mapping[str, str], request: AttemptRequest | PromptRequest
) -> ProcessResult:
    """Run an agent CLI for ``request``: in its workdir, its prompt on stdin, killed (with
    its whole process group) at its timeout. Never pass a prompt on argv."""
    return run_process(
        list(argv),
        env=dict(env),
        cwd=request.sandbox.workdir,
        timeout=request.timeout,
        stdin_text=request.prompt,
    )


class SkillInstaller(abc.ABC):
    """Puts the neighbourhood where one agent discovers skills, inside an attempt's sandbox.

    ``id`` is the backend id it serves (the entry-point name in ``caliper.skill_installers``).
    Installing never preloads a skill into the prompt: the agent must choose to load it.
    """

    id: str

    @abc.abstractmethod
    def install(
        self, skills: Sequence[ResolvedSkill], sandbox: AttemptSandbox
    ) -> list[InstalledSkill]:
        """Copy each skill folder into the agent's skills root; return where each landed."""


class FolderSkillInstaller(SkillInstaller):
    """An installer for agents that discover skills as ``<skills root>/<name>/SKILL.md``.

    Most agents do; a subclass only says where the root is. Each skill folder is copied under
    its frontmatter name with :func:`copy_skill_tree` (specs and results beside it left out,
    links kept inside the folder, size capped).
    """

    @abc.abstractmethod
    def skills_root(self, sandbox: AttemptSandbox) -> Path:
        """The folder this agent scans for skills inside the attempt's sandbox."""

    def install(
        self, skills: Sequence[ResolvedSkill], sandbox: AttemptSandbox
    ) -> list[InstalledSkill]:
        root = self.skills_root(sandbox)
        root.mkdir(parents=True, exist_ok=True)
        installed = []
        for skill in skills:
            destination = root / skill_folder_name(skill)
            copy_skill_tree(skill, destination)
            installed.append(InstalledSkill(skill.name, skill.description, destination))
        return installed


@attrs_classes.frozen
class CopiedUserSkills:
    """What :func:`copy_user_skills` brought in: skill names copied, and one note per skill
    left out (a declared skill of the same name wins, or the copy failed)."""

    names: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def copy_user_skills(
    sources: Iterable[Path], root: Path, *, taken: set[str] | None = None
) -> CopiedUserSkills:
    """Copy the user's own skill folders (``<source>/<name>/SKILL.md``) into ``root``.

    For ``--user-customizations``: every folder of each source in turn, sorted, skipping
    hidden ones; a name already in ``taken`` (default: the folders already in ``root``, i.e.
    the declared skills an installer put there) is left out with a note, as is a skill that
    cannot be copied (over the size cap, unreadable). The copy rules are
    :func:`copy_skill_tree`'s. The first source wins between two sources with one name.
    """
    from caliper.system.skill_tree import SkillUnusable, copy_tree

    if taken is None:
        taken = {p.name for p in root.iterdir()} if root.is_dir() else set()
    copied: list[str] = []
    notes: list[str] = []
    for source in sources:
        if not source.is_dir():
            continue
        for folder in sorted(source.iterdir()):
            if not (folder / "SKILL.md").is_file() or folder.name.startswith("."):
                continue
            if folder.name in taken:
                if folder.name not in copied:
                    notes.append(f"user skill {folder.name}: a declared skill of that name wins")
                continue
            try:
                copy_tree(folder, root / folder.name)
            except (SkillUnusable, OSError) as exc:
                notes.append(f"user skill {folder.name} was not loaded: {exc}")
                continue
            taken.add(folder.name)
            copied.append(folder.name)
    return CopiedUserSkills(tuple(copied), tuple(notes))


def skill_folder_name(skill: ResolvedSkill) -> str:
    """The skill's name, checked to be usable as one folder name (never a path)."""
    name = skill.name
    if not name or name in (".", "..") or "/" in name or "\\" in name or name.startswith("."):
        raise CaliperError(
            f"Skill {skill.source_dir} has the name {name!r}, which cannot be a folder name.",
            hint="Give it a plain `name:` in its SKILL.md frontmatter.",
        )
    return name


class McpTranslator(abc.ABC):
    """Turns the spec's ``mcp:`` servers into one agent's native configuration.

    ``id`` is the backend id it serves (the entry-point name in ``caliper.mcp_translators``).

    The secret rule: the servers arrive with their ``${VAR}`` references resolved, and those
    values may only be written under ``sandbox.private`` (with
    :func:`caliper.plugin.private_files.write_secret_file`) or passed in the agent's environment
    (``NativeMcpConfig.env``). A config the agent reads from the attempt home refers to them
    in the agent's own reference syntax: :class:`caliper.plugin.mcp.EnvReferences` with the agent's
    template (``${NAME}`` for pi and Hermes, a bare ``NAME`` for Codex's ``env_http_headers``
    and ``env_vars``, ``{env:NAME}`` for opencode).
    """

    id: str

    @abc.abstractmethod
    def translate(
        self, servers: Sequence[McpServerConfig], sandbox: AttemptSandbox
    ) -> NativeMcpConfig:
        """Produce the native config for ``servers`` (already ``${VAR}``-resolved)."""


def copy_skill_tree(skill: ResolvedSkill, destination: Path) -> None:
    """Copy a resolved skill folder to ``destination`` (shared by every installer).

    Skills declared as a bare ``SKILL.md`` are copied with their sibling files, since a skill's
    scripts and references live beside it. The rules are :mod:`caliper.system.skill_tree`'s: links
    followed only inside the folder, loops, dangling links and special files left out, the
    total size capped; version-control folders, caliper's results and eval specs left out.
    The folder is walked once per run (the scan the skill was resolved and hashed with), not
    once per attempt. Raises :class:`caliper.errors.CaliperError` when the folder is over the
    size cap.
    """
    from caliper.system.skill_tree import SkillUnusable, copy_tree

    try:
        copy_tree(skill.source_dir, destination, tree=skill.tree, source_root=skill.source_root)
    except SkillUnusable as exc:
        raise CaliperError(str(exc)) from None
