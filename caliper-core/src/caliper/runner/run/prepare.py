"""Everything checked before the first attempt: spec, engine, CLI, MCP, skills, ablation.

The backend's own MCP pre-flight (``Backend.check_mcp_servers``) runs last, once, when the
spec has MCP servers.

Each check fails with one clear message, so a run never starts k×tasks attempts that were
doomed from the start (a missing CLI, an unset secret, a misspelt ``--ablate``). Everything
the run needs from the file system around it (the spec's hash, the results folder, where
sandboxes go) is read or resolved here, once, so deleting or editing the spec or the current
folder mid-run changes nothing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import click

from caliper.errors import CaliperError, SetupError, UsageError
from caliper.host.engine import resolve_engine
from caliper.plugin.mcp import ResolvedMcp, SecretSet, resolve_servers
from caliper.plugin.sandbox import real_home, sandbox_parent
from caliper.results.store import caliper_root
from caliper.runner.attempt.forbidden import forbidden_patterns
from caliper.spec.load import load_spec_for_run
from caliper.spec.problems import SpecInvalid
from caliper.spec.skills import hidden_activation_problems
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.host.engine import Engine
    from caliper.host.plugins import PluginHost
    from caliper.plugin.backend import McpTranslator, SkillInstaller
    from caliper.plugin.judge import Judge
    from caliper.plugin.skills import ResolvedSkill
    from caliper.runner.run.options import RunOptions
    from caliper.spec.model import Spec


@attrs_classes.frozen
class PreparedRun:
    """A run that passed every pre-flight check and is ready to schedule attempts."""

    options: RunOptions
    spec: Spec
    judges: Mapping[str, Judge]
    engine: Engine
    cli_path: Path
    skills: tuple[ResolvedSkill, ...]
    installed_skills: tuple[ResolvedSkill, ...]
    mcp: ResolvedMcp
    installer: SkillInstaller | None
    translator: McpTranslator | None
    forbidden: tuple[re.Pattern[str], ...] = ()
    spec_sha256: str = ""
    """SHA-256 of the spec file as it was read at the start (an edit mid-run changes nothing)."""
    sandbox_parent: Path | None = None
    """Where attempt roots are created, resolved once (``None``: the system temp folder)."""
    results_root: Path | None = None
    """The ``.caliper/`` folder the run is saved in, resolved once at the start (the current
    folder or the spec may be deleted while the run goes on)."""
    ablation: Ablation = attrs.field(factory=lambda: Ablation())
    """The declared skills and ``mcp:`` servers ``--ablate`` removed for this run."""
    user_customizations: bool = False
    """Whether attempts also load the user's own CLI setup (flag, else spec, else off)."""

    @property
    def secrets(self) -> SecretSet:
        return self.mcp.secrets


@attrs_classes.frozen
class Ablation:
    """What ``--ablate`` removes: declared skills and declared ``mcp:`` servers, by name."""

    skills: tuple[str, ...] = ()
    mcp: tuple[str, ...] = ()


SKILL_PREFIX = "skill:"
MCP_PREFIX = "mcp:"


def _no_such(
    flag_value: str, name: str, kind: str, names: Sequence[str], flag: str = "--ablate"
) -> UsageError:
    import difflib

    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    suggestion = f" Did you mean {close[0]!r}?" if close else ""
    declared = ", ".join(names) if names else "none"
    return UsageError(
        f"{flag} {flag_value!r}: the spec declares no {kind} with that name.{suggestion}",
        hint=f"Declared {kind}s: {declared}.",
    )


def check_ablation(
    ablate: Sequence[str],
    skills: Sequence[ResolvedSkill],
    servers: Sequence[str] = (),
    *,
    flag: str = "--ablate",
) -> Ablation:
    """Sort every ``--ablate`` name into a declared skill or a declared ``mcp:`` server.

    ``skill:NAME`` and ``mcp:NAME`` say which; a bare name that is both is refused (exit 2)
    listing the two qualified spellings, and a name that is neither gets the closest one.
    ``flag`` is the flag the messages name (``--baseline`` checks its names the same way).
    """
    skill_names = [skill.name for skill in skills]
    server_names = list(servers)
    removed_skills: list[str] = []
    removed_servers: list[str] = []
    for value in ablate:
        if value.startswith(SKILL_PREFIX):
            name = value[len(SKILL_PREFIX) :]
            if name not in skill_names:
                raise _no_such(value, name, "skill", skill_names, flag)
            removed_skills.append(name)
        elif value.startswith(MCP_PREFIX):
            name = value[len(MCP_PREFIX) :]
            if name not in server_names:
                raise _no_such(value, name, "mcp: server", server_names, flag)
            removed_servers.append(name)
        elif value in skill_names and value in server_names:
            raise UsageError(
                f"{flag} {value!r}: the spec declares both a skill and an mcp: server with "
                "that name.",
                hint=f"Say which: {flag} skill:{value} or {flag} mcp:{value}.",
            )
        elif value in skill_names:
            removed_skills.append(value)
        elif value in server_names:
            removed_servers.append(value)
        else:
            names = skill_names + [n for n in server_names if n not in skill_names]
            import difflib

            close = difflib.get_close_matches(value, names, n=1, cutoff=0.6)
            suggestion = f" Did you mean {close[0]!r}?" if close else ""
            hint = f"Declared skills: {', '.join(skill_names) or 'none'}."
            if server_names:
                hint += f" Declared mcp: servers: {', '.join(server_names)}."
            raise UsageError(
                f"{flag} {value!r}: the spec declares no skill"
                + (" or mcp: server" if server_names else "")
                + f" with that name.{suggestion}",
                hint=hint,
            )
    return Ablation(tuple(dict.fromkeys(removed_skills)), tuple(dict.fromkeys(removed_servers)))


def wants_user_customizations(options: RunOptions, spec: Spec, engine: Engine) -> bool:
    """``--user-customizations``/``--no-…`` when given, else the spec's ``user_customizations:``,
    else off; refused (exit 2) on a backend that cannot load a user's setup at all."""
    wanted = options.user_customizations
    if wanted is None:
        wanted = bool(spec.user_customizations)
    if wanted and not engine.backend.supports_user_customizations():
        raise UsageError(
            f"--model {engine.label} cannot load your own setup (user customizations): "
            f"{engine.backend.user_customizations_refusal() or 'the backend does not support it.'}",
            hint="Run without --user-customizations (or set `user_customizations: false`), "
            "or pick a backend that supports it (see docs/spec.md).",
        )
    return wanted


def check_cli(engine: Engine) -> Path:
    """The backend's CLI path, or one :class:`SetupError` with the install hint.

    Also asks the backend whether it can run at all (``Backend.check_ready``).
    """
    path = engine.backend.find_cli()
    if path is None:
        raise SetupError(engine.backend.missing_cli_message())

    engine.backend.check_ready(engine.model, real_home())
    return path


def check_mcp_support(spec: Spec, engine: Engine) -> None:
    """Refuse a spec with ``mcp:`` servers on a backend that cannot honour them."""
    if spec.mcp and not engine.backend.supports_mcp():
        message = engine.backend.mcp_refusal() or (
            f"The {engine.backend.id} backend cannot give the agent the spec's MCP servers."
        )
        raise UsageError(
            f"{spec.path.name} declares mcp: servers, which --model {engine.label} cannot use. "
            f"{message}"
        )


def check_conversation_support(spec: Spec, engine: Engine) -> None:
    """Refuse a spec whose tasks plant a ``history:`` on a backend that cannot resume one."""
    planted = [task.name for task in spec.tasks if task.conversation is not None]
    if planted and not engine.backend.supports_conversation():
        message = engine.backend.conversation_refusal() or (
            f"The {engine.backend.id} backend cannot start a task from a planted conversation."
        )
        names = ", ".join(repr(name) for name in planted)
        raise UsageError(
            f"{spec.path.name}: task {names} declares history:, which --model {engine.label} "
            f"cannot use. {message}",
            hint="Run it on a backend that supports history: (claude-code, codex, pi, hermes).",
        )


def _note(text: str) -> None:
    click.echo(f"Note: {text}", err=True)


def _warn(text: str) -> None:
    click.echo(click.style("Warning: ", fg="yellow") + text, err=True)


def check_hidden_activation(spec: Spec, skills: Sequence[ResolvedSkill], engine: Engine) -> None:
    """Refuse ``activates:`` entries naming a ``disable-model-invocation`` skill when the
    engine's backend hides such skills from the model (the check could never pass)."""
    hides = getattr(engine.backend, "hides_model_disabled_skills", None)
    if hides is None or not hides():
        return

    problems = hidden_activation_problems(spec, skills, agent=engine.backend_id)
    if problems:
        raise SpecInvalid(problems)


def prepare_run(options: RunOptions, host: PluginHost) -> PreparedRun:
    """Run the pre-flight checks in order and gather what the attempts need."""
    judges = host.judges()
    # one read of the spec gives its text and its hash; its skills are resolved this once
    spec, resolved = load_spec_for_run(options.spec_path, judges, on_note=_note)
    spec_sha256 = spec.sha256
    results_root = (options.results_root or caliper_root(Path.cwd(), spec.path)).absolute()
    attempt_parent = sandbox_parent()
    forbidden = forbidden_patterns(
        spec.sandbox.forbidden_files,
        spec_file_name=spec.path.name,
        spec_path=str(spec.path.resolve()),
    )
    engine = resolve_engine(host, options.model, flag="--model")
    cli_path = check_cli(engine)
    check_mcp_support(spec, engine)
    check_conversation_support(spec, engine)
    user_customizations = wants_user_customizations(options, spec, engine)
    skills = tuple(resolved)
    ablation = check_ablation(options.ablate, skills, [server.name for server in spec.mcp])
    # an ablated server is never started, so its ${VAR}s need not be set either
    mcp = resolve_servers([m for m in spec.mcp if m.name not in ablation.mcp], os.environ)
    installed = tuple(s for s in skills if s.name not in set(ablation.skills))
    check_hidden_activation(spec, installed, engine)
    listing = engine.backend.skill_listing_warning(
        [(s.name, s.description) for s in installed], engine.model
    )
    if listing:
        _warn(listing)
    installer = host.skill_installer(engine.backend_id) if installed else None
    if installed and installer is None:
        raise CaliperError(
            f"The {engine.backend_id} backend has no skill installer, so the spec's skills "
            "cannot be installed.",
            hint="Reinstall the backend plugin (see `caliper plugins`).",
        )
    translator = host.mcp_translator(engine.backend_id) if mcp.servers else None
    if mcp.servers and translator is None:
        raise CaliperError(
            f"The {engine.backend_id} backend has no MCP translator for the spec's mcp: servers.",
            hint="Reinstall the backend plugin (see `caliper plugins`).",
        )
    if mcp.servers:
        engine.backend.check_mcp_servers(mcp.servers, real_home())
    return PreparedRun(
        options=options,
        spec=spec,
        judges=judges,
        engine=engine,
        cli_path=cli_path,
        skills=skills,
        installed_skills=installed,
        mcp=mcp,
        installer=installer,
        translator=translator,
        forbidden=tuple(forbidden),
        spec_sha256=spec_sha256,
        sandbox_parent=attempt_parent.absolute() if attempt_parent is not None else None,
        results_root=results_root,
        ablation=ablation,
        user_customizations=user_customizations,
    )
