"""The isolated ``HERMES_HOME`` each attempt runs in, seeded only with the user's login.

Hermes keeps everything (config, logins, persona, memory, skills, sessions) in one folder.
Caliper gives every attempt a fresh one inside the sandbox home and copies in just three
files from the user's own: ``.env`` (API keys), ``auth.json`` (OAuth logins) and
``config.yaml`` (provider and model choice), the last one rewritten so Hermes behaves as a
plain, non-interactive agent. ``SOUL.md``, memories, personal skills and sessions never come
along; ``--user-customizations`` brings the personal skills only (:func:`load_user_setup`).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from caliper.plugin import SetupError
from caliper.plugin.attempt import UserSetup
from caliper.plugin.backend import copy_user_skills
from caliper.plugin.private_files import copy_private, write_private
from caliper_backend_hermes.skills import hidden_skill_names

_PASSED_VARIABLES = re.compile(r"^[A-Z][A-Z0-9_]*_API_KEY$")
_CONFIG_REFERENCE = re.compile(r"\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}")

SEED_FILES = (".env", "auth.json")
CONFIG_FILE = "config.yaml"
API_MAX_RETRIES = 2
"""One retry per model call: enough for a blip, short enough not to stall on a dead provider."""
MCP_DISCOVERY_WAIT = 150
"""Seconds Hermes may wait for its MCP servers before the first model call.

Hermes' own default (1.5 s) lets the agent start without a server that is slow or retrying;
this bound outlasts Hermes' whole discovery (60 s per server connect, 120 s in all), so the
tool list the model sees, and the log caliper checks, hold every server's final state.
"""


def user_hermes_home(real_home: Path, environ: Mapping[str, str] | None = None) -> Path:
    """Where the user's own Hermes keeps its files: ``$HERMES_HOME``, else ``~/.hermes``.

    A sticky profile (``hermes profile use NAME``) is followed the way Hermes follows it.
    """
    environ = os.environ if environ is None else environ
    configured = environ.get("HERMES_HOME", "").strip()
    base = Path(configured).expanduser() if configured else real_home / ".hermes"
    if configured and base.parent.name == "profiles":
        return base
    try:
        active = (base / "active_profile").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return base
    profile = base / "profiles" / active
    return profile if active and active != "default" and profile.is_dir() else base


def read_user_config(source: Path) -> dict[str, Any]:
    """The user's ``config.yaml`` as a mapping (empty when absent)."""
    path = source / CONFIG_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise SetupError(
            f"Cannot read your Hermes config {path}: {exc}",
            hint="Fix or remove that file, then run `hermes model` to choose a model.",
        ) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SetupError(
            f"Your Hermes config {path} is not valid YAML: {exc}",
            hint="Fix it (or run `hermes setup`) and try again.",
        ) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise SetupError(
            f"Your Hermes config {path} is not a mapping of settings.",
            hint="Fix it (or run `hermes setup`) and try again.",
        )
    return data


def _section(config: dict[str, Any], name: str) -> dict[str, Any]:
    value = config.get(name)
    if not isinstance(value, dict):
        value = {}
        config[name] = value
    return value


def neutral_config(
    user_config: Mapping[str, Any],
    mcp_servers: Mapping[str, Any] | None = None,
    hidden_skills: Sequence[str] = (),
) -> dict[str, Any]:
    """The user's config with everything that would make Hermes non-neutral switched off.

    Kept: provider, model, credentials, toolsets. Forced: no lazy ``pip install`` at run
    time, few API retries, no memory or background self-review, no skills from outside the
    attempt, no shell hooks, no personality, no worktrees, no waiting for answers to the
    ``clarify`` tool, and exactly the spec's MCP servers, all connected (or given up on)
    before the first model call. ``hidden_skills`` (skills nested inside declared ones) are
    switched off by name.
    """
    config: dict[str, Any] = json.loads(json.dumps(dict(user_config), default=str))
    security = _section(config, "security")
    security["allow_lazy_installs"] = False
    security["tirith_enabled"] = False
    agent = _section(config, "agent")
    agent["api_max_retries"] = API_MAX_RETRIES
    memory = _section(config, "memory")
    memory.update(memory_enabled=False, user_profile_enabled=False, provider="", nudge_interval=0)
    skills = _section(config, "skills")
    skills.update(external_dirs=[], creation_nudge_interval=0, inline_shell=False)
    skills["disabled"] = list(hidden_skills)
    display = _section(config, "display")
    display.update(personality="", interface="cli")
    _section(config, "clarify")["timeout"] = 0
    config["worktree"] = False
    config["hooks"] = {}
    config["hooks_auto_accept"] = False
    config["mcp_servers"] = dict(mcp_servers or {})
    if mcp_servers:
        config["mcp_discovery_timeout"] = MCP_DISCOVERY_WAIT
    return config


def seed_home(hermes_home: Path, source: Path) -> None:
    """The part of :func:`prepare_home` that depends on the sandbox alone: create
    ``hermes_home`` with the user's login files (from ``source``), its ``skills`` folder, and
    the mark that keeps Hermes from copying its bundled skills in.

    Writes only inside ``hermes_home`` and spawns nothing, so it can run ahead of the attempt.
    """
    hermes_home.mkdir(parents=True, exist_ok=True)
    for name in SEED_FILES:
        copy_private(source / name, hermes_home / name)
    (hermes_home / ".no-bundled-skills").write_text("", encoding="utf-8")
    (hermes_home / "skills").mkdir(exist_ok=True)


def finish_home(
    hermes_home: Path,
    user_config: Mapping[str, Any],
    *,
    version: str | None,
    mcp_servers: Mapping[str, Any] | None = None,
) -> None:
    """The part of :func:`prepare_home` one run decides, in a home :func:`seed_home` made:
    ``config.yaml`` (the user's ``user_config`` made neutral, with the run's MCP servers and
    the skills installed by then hidden) and, with the installed ``version``, the mark that
    keeps Hermes from checking PyPI at start-up."""
    config = neutral_config(user_config, mcp_servers, hidden_skill_names(hermes_home))
    write_private(hermes_home / CONFIG_FILE, yaml.safe_dump(config, sort_keys=False))
    if version:
        stamp = {"ts": time.time(), "behind": 0, "rev": None, "ver": version}
        (hermes_home / ".update_check").write_text(json.dumps(stamp), encoding="utf-8")


def prepare_home(
    hermes_home: Path,
    source: Path,
    *,
    version: str | None,
    mcp_servers: Mapping[str, Any] | None = None,
) -> None:
    """Fill ``hermes_home`` for one run (skills may already be installed there):
    :func:`seed_home` then :func:`finish_home`.

    Also marks the home so Hermes neither copies its bundled skills in nor checks PyPI for a
    newer version at start-up.
    """
    seed_home(hermes_home, source)
    user_config = read_user_config(source)
    finish_home(hermes_home, user_config, version=version, mcp_servers=mcp_servers)


USER_SETUP_NOT_LOADED = (
    "SOUL.md (persona), AGENTS.md rules, memories and sessions stay out: Hermes runs with "
    "--ignore-rules and memory off, so an attempt stays a neutral agent",
    "the mcp_servers of your config.yaml are not loaded; only the spec's servers run",
    "Hermes' bundled skills stay off",
)
"""What ``--user-customizations`` does not bring into a Hermes attempt, said in the run."""


def load_user_setup(hermes_home: Path, source: Path) -> UserSetup:
    """Copy the user's own skills (``<HERMES_HOME>/skills/<category>/<name>/``) into the
    attempt's home, for ``--user-customizations``; a declared skill of the same name wins.

    Called before :func:`finish_home` (which writes the config naming the skills to hide)
    and after or before :func:`seed_home`, which keeps installed skills in place.
    """
    target = hermes_home / "skills"
    taken = {p.parent.name for p in target.glob("*/*/SKILL.md")} if target.is_dir() else set()
    root = source / "skills"
    categories = sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []
    names: list[str] = []
    notes: list[str] = []
    for category in categories:
        if category.name.startswith("."):
            continue
        copied = copy_user_skills([category], target / category.name, taken=taken)
        names += copied.names
        notes += copied.notes
    return UserSetup(skills=tuple(names), not_loaded=(*notes, *USER_SETUP_NOT_LOADED))


def passed_variables(config_path: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """Provider keys Hermes may need from the user's environment.

    Hermes reads ``*_API_KEY`` variables as well as its own ``.env``, and its config may refer
    to variables as ``${NAME}``; those (and nothing else) are passed on.
    """
    try:
        wanted = set(_CONFIG_REFERENCE.findall(config_path.read_text(encoding="utf-8")))
    except OSError:
        wanted = set()
    return {
        key: value
        for key, value in environ.items()
        if (key in wanted or _PASSED_VARIABLES.match(key))
        and not key.startswith("CALIPER_MCP_SECRET_")
    }
