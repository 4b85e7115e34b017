"""The CODEX_HOME and environment one ``codex`` run sees.

Each attempt gets ``<sandbox home>/.codex`` as CODEX_HOME and the sandbox home as HOME (so the
real ``~/.agents/skills`` and ``~/.codex`` are out of sight). From the user's real setup only
this is carried over:

* the user's ``config.toml``, cleaned by :mod:`caliper_backend_codex.config`;
* ``auth.json`` (a ``codex login``), copied with mode 0600 when the active provider uses the
  OpenAI login (the built-in ``openai`` provider or ``requires_openai_auth = true``);
* from the caliper process environment: OpenAI credentials and endpoints, the variables the
  configured providers name in ``env_key``/``env_http_headers``, ``AWS_*`` for a provider
  using AWS auth, proxies and CA bundles.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from caliper.plugin.attempt import AttemptSandbox, UserSetup
from caliper.plugin.backend import copy_user_skills
from caliper.plugin.private_files import copy_private
from caliper_backend_codex import config as codex_config
from caliper_backend_codex.skills import codex_home, hidden_skill_entries

AUTH_FILE = "auth.json"
FORWARDED_NAMES = frozenset(
    {
        "OPENAI_API_KEY",
        "CODEX_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_ORGANIZATION",
        "OPENAI_ORG_ID",
        "OPENAI_PROJECT",
        "OPENAI_PROJECT_ID",
        "CODEX_CA_CERTIFICATE",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
        "no_proxy",
    }
)


@attrs.frozen
class PreparedHome:
    """What :func:`prepare` produced: the CODEX_HOME, the config written and the env, and
    what of the user's own setup was loaded (``None`` when not asked)."""

    codex_home: Path
    config: Mapping[str, Any]
    env: Mapping[str, str]
    user_setup: UserSetup | None = None


RULES_FILE = "AGENTS.md"
NOT_HONOURED = (
    "Codex's bundled system skills stay off (caliper cannot tell their loads apart yet)",
    "plugins and project trust entries are not loaded",
)


def load_user_files(
    sandbox: AttemptSandbox, user_home: Path, codex_home_dir: Path
) -> tuple[list[str], list[str], list[str]]:
    """Copy the user's skills (``~/.codex/skills``, ``~/.agents/skills``) and ``AGENTS.md``
    into the attempt's CODEX_HOME; (skill names, rules names, notes). Sessions and memories
    are never copied."""
    sources = [user_home / "skills", sandbox.real_home / ".agents" / "skills"]
    copied = copy_user_skills(sources, codex_home_dir / "skills")
    skills, notes = list(copied.names), list(copied.notes)
    rules: list[str] = []
    agents = user_home / RULES_FILE
    if agents.is_file():
        (codex_home_dir / RULES_FILE).write_bytes(agents.read_bytes())
        rules.append(f"~/.codex/{RULES_FILE}")
    return skills, rules, notes


def copy_auth(user_home: Path, destination: Path) -> bool:
    """Copy the user's ``auth.json`` (0600) when there is one; never touches the original."""
    return copy_private(user_home / AUTH_FILE, destination / AUTH_FILE)


def forwarded_env(
    user_config: Mapping[str, Any], environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The caller's variables an attempt needs for authentication and networking."""
    env = os.environ if environ is None else environ
    wanted = set(FORWARDED_NAMES) | codex_config.provider_variables(user_config)
    aws = codex_config.uses_aws(user_config)
    return {
        name: value
        for name, value in env.items()
        if name in wanted or (aws and name.startswith("AWS_"))
    }


@attrs.frozen
class HomeSeed:
    """What :func:`seed` wrote and found, for every run of one sandbox (attempt or judge call):
    the attempt's CODEX_HOME, the user's codex home and cleaned-to-be config, and the run's
    environment."""

    codex_home: Path
    user_home: Path
    user_config: Mapping[str, Any]
    env: Mapping[str, str]


def seed(sandbox: AttemptSandbox, environ: Mapping[str, str] | None = None) -> HomeSeed:
    """The part of :func:`prepare` that depends on the sandbox alone: create CODEX_HOME, copy
    ``auth.json`` when the user's provider uses the OpenAI login, build the environment.

    Reads the user's ``config.toml`` (a malformed one raises :class:`SetupError`); writes only
    inside the sandbox and spawns nothing, so the runner may call it ahead of the attempt.
    """
    env_source = os.environ if environ is None else environ
    user_home = codex_config.user_codex_home(sandbox.real_home, env_source)
    user = codex_config.load_user_config(user_home)
    home = codex_home(sandbox)
    home.mkdir(parents=True, exist_ok=True)
    # which provider a run uses is the user's choice alone: attempt_config keeps it whatever
    # the attempt's MCP servers or options
    if codex_config.needs_openai_login(codex_config.attempt_config(user)):
        copy_auth(user_home, home)
    env = dict(sandbox.base_env)
    env.update(forwarded_env(user, env_source))
    env["HOME"] = str(sandbox.home)
    env["CODEX_HOME"] = str(home)
    return HomeSeed(codex_home=home, user_home=user_home, user_config=user, env=env)


def prepare(
    sandbox: AttemptSandbox,
    *,
    mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
    skill_instructions: bool = True,
    environ: Mapping[str, str] | None = None,
    user_customizations: bool = False,
    seeded: HomeSeed | None = None,
) -> PreparedHome:
    """Write the attempt's CODEX_HOME (config, auth) and build the run's environment.

    ``seeded`` is :func:`seed`'s answer for this sandbox when it was made already (ahead of
    the attempt); otherwise it is made now. Then the ``config.toml`` the run needs is written
    (it depends on the spec's MCP servers, judge or attempt, and the skills installed). With
    ``user_customizations`` the user's skills, ``AGENTS.md``, personal settings and MCP
    servers come along too (see :func:`load_user_files` and ``attempt_config``).
    """
    if seeded is None:
        seeded = seed(sandbox, environ)
    user_home, user, home = seeded.user_home, seeded.user_config, seeded.codex_home
    setup = None
    if user_customizations:
        skills, rules, notes = load_user_files(sandbox, user_home, home)
        own_servers = user.get("mcp_servers") if isinstance(user.get("mcp_servers"), dict) else {}
        declared = set(mcp_servers or {})
        notes += [
            f"user MCP server {name}: the spec's server of that name wins"
            for name in own_servers
            if name in declared
        ]
        kept = [k for k in codex_config.kept_personal_keys(user) if k != "mcp_servers"]
        setup = UserSetup(
            skills=tuple(skills),
            rules=tuple(rules),
            settings=(f"config.toml: {', '.join(kept)}",) if kept else (),
            mcp=tuple(sorted(n for n in own_servers if n not in declared)),
            not_loaded=(*notes, *NOT_HONOURED),
        )
    written = codex_config.attempt_config(
        user,
        mcp_servers=mcp_servers,
        skill_instructions=skill_instructions,
        hidden_skills=hidden_skill_entries(home),
        keep_personal=user_customizations,
    )
    codex_config.write_config(written, home)
    return PreparedHome(codex_home=home, config=written, env=dict(seeded.env), user_setup=setup)
