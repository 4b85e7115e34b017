"""``--user-customizations`` for Gemini CLI: the user's own ``~/.gemini`` setup in an attempt.

Read from the user's Gemini home (``$GEMINI_CLI_HOME``, else ``~``), as the pinned CLI reads
it: ``.gemini/settings.json`` (merged *under* caliper's settings, so auth, retries,
telemetry, usage statistics, update checks and the built-in skills stay caliper's), the
global memory files (``.gemini/GEMINI.md``, or the names in ``context.fileName``), the
user's skills (``.gemini/skills`` then ``.agents/skills``; a declared skill of the same name
wins), the extensions (``.gemini/extensions``, each extension's ``.env`` copied privately)
and the ``mcpServers`` of the settings (a declared server of the same name wins).

Gemini CLI expands ``$VAR`` and ``${VAR}`` in ``settings.json``: the user's references are
written as they are and the variables they name are passed on from caliper's environment,
so no value is ever expanded into a file. Sessions, chat history, ``tmp/``, trusted folders,
account and installation ids and MCP OAuth tokens are never copied.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from caliper.plugin import UserSetup
from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.backend import copy_user_skills
from caliper.plugin.private_files import copy_private
from caliper_backend_gemini.skills import gemini_dir, skills_root

EXTENSIONS = "extensions"
DEFAULT_MEMORY_FILE = "GEMINI.md"
_REFERENCE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")
NOT_LOADED = (
    "sessions, chat history and the tmp/ folder of your ~/.gemini stay out",
    "MCP OAuth tokens (mcp-oauth-tokens.json), policies/ and commands/ are not copied",
    "caliper's settings win over yours: auth, maxAttempts 1, telemetry, usage statistics "
    "and update checks off, Gemini CLI's built-in skills off",
)
"""What ``--user-customizations`` does not bring into a Gemini attempt, said in the run."""


@attrs.frozen
class LoadedSetup:
    """The user's setup for one attempt: ``settings`` (the user's, without ``mcpServers``),
    their ``mcp_servers``, the ``references`` their settings make (``$VAR`` strings, written
    as they are), the variables those name (``env``) and what was loaded (``setup``)."""

    settings: Mapping[str, Any]
    mcp_servers: Mapping[str, Any]
    references: tuple[str, ...]
    env: Mapping[str, str]
    setup: UserSetup


def merge_under(
    user: Mapping[str, Any], enforced: Mapping[str, Any], declared: Sequence[str] = ()
) -> dict[str, Any]:
    """``user`` with ``enforced`` laid over it, section by section (``enforced`` wins); the
    user's ``skills.disabled`` names are kept beside caliper's, except the ``declared``
    skills under test (a user's setup never switches those off)."""
    merged = _laid_over(user, enforced)
    skills, own = merged.get("skills"), user.get("skills")
    if isinstance(skills, dict) and isinstance(own, Mapping):
        extra = own.get("disabled")
        if isinstance(extra, list):
            names = [*skills.get("disabled", []), *(n for n in extra if n not in declared)]
            skills["disabled"] = [n for i, n in enumerate(names) if n not in names[:i]]
    return merged


def _laid_over(user: Mapping[str, Any], enforced: Mapping[str, Any]) -> dict[str, Any]:
    merged: dict[str, Any] = dict(user)
    for key, value in enforced.items():
        mine = merged.get(key)
        if isinstance(value, Mapping) and isinstance(mine, Mapping):
            merged[key] = _laid_over(mine, value)
        else:
            merged[key] = value
    return merged


def references_in(value: Any) -> list[str]:
    """Every ``$VAR`` / ``${VAR}`` written in the strings of ``value``."""
    if isinstance(value, str):
        return [m.group(0) for m in _REFERENCE.finditer(value)]
    if isinstance(value, Mapping):
        return [r for item in value.values() for r in references_in(item)]
    if isinstance(value, (list, tuple)):
        return [r for item in value for r in references_in(item)]
    return []


def memory_file_names(settings: Mapping[str, Any]) -> list[str]:
    """The global memory file names (``context.fileName``, default ``GEMINI.md``); names with
    a path part are left out."""
    context = settings.get("context")
    name = context.get("fileName") if isinstance(context, Mapping) else None
    names = name if isinstance(name, list) else [name] if isinstance(name, str) else []
    plain = [n for n in names if isinstance(n, str) and n and Path(n).name == n]
    return plain or [DEFAULT_MEMORY_FILE]


def copy_extensions(source: Path, target: Path) -> list[str]:
    """Copy the user's extensions folder; each extension's ``.env`` (its settings, which may
    hold secrets) with mode 0600. Returns the extension names."""
    if not source.is_dir():
        return []
    shutil.copytree(
        source, target, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".env")
    )
    for env_file in source.glob("*/.env"):
        copy_private(env_file, target / env_file.parent.name / ".env")
    return sorted(p.name for p in source.iterdir() if p.is_dir() and not p.name.startswith("."))


def load(
    sandbox: AttemptSandbox,
    user_dir: Path,
    user_settings: Mapping[str, Any],
    environ: Mapping[str, str],
    declared_servers: Mapping[str, Any],
) -> LoadedSetup:
    """Copy the user's memory files, skills and extensions into the attempt's ``~/.gemini``
    and say which settings, MCP servers and variables the attempt takes from the user."""
    folder = gemini_dir(sandbox)
    rules = [
        f"~/.gemini/{name}"
        for name in memory_file_names(user_settings)
        if copy_private(user_dir / name, folder / name)
    ]
    skills = copy_user_skills(
        [user_dir / "skills", user_dir.parent / ".agents" / "skills"], skills_root(sandbox)
    )
    extensions = copy_extensions(user_dir / EXTENSIONS, folder / EXTENSIONS)
    copy_private(user_dir / EXTENSIONS / "extension-enablement.json",
                 folder / EXTENSIONS / "extension-enablement.json")  # fmt: skip
    servers = user_settings.get("mcpServers")
    own = dict(servers) if isinstance(servers, Mapping) else {}
    notes = [*skills.notes]
    notes += [f"user MCP server {n}: the spec's server of that name wins"
              for n in own if n in declared_servers]  # fmt: skip
    own = {name: entry for name, entry in own.items() if name not in declared_servers}
    settings = {k: v for k, v in user_settings.items() if k != "mcpServers"}
    references = tuple(dict.fromkeys(references_in(settings) + references_in(own)))
    names = {_REFERENCE.fullmatch(r).group(1) for r in references}  # type: ignore[union-attr]
    env = {n: environ[n] for n in sorted(names)
           if n in environ and not n.startswith("CALIPER_MCP_SECRET_")}  # fmt: skip
    described = [f"settings.json: {', '.join(sorted(settings))}"] if settings else []
    if extensions:
        described.append(f"extensions: {', '.join(extensions)}")
    setup = UserSetup(
        skills=tuple(skills.names),
        rules=tuple(rules),
        settings=tuple(described),
        mcp=tuple(sorted(own)),
        not_loaded=(*notes, *NOT_LOADED),
    )
    return LoadedSetup(settings, own, references, env, setup)
