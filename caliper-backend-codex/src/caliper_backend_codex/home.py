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
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from caliper.attempt import AttemptSandbox
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
    """What :func:`prepare` produced: the CODEX_HOME, the config written and the env."""

    codex_home: Path
    config: Mapping[str, Any]
    env: Mapping[str, str]


def copy_auth(user_home: Path, destination: Path) -> bool:
    """Copy the user's ``auth.json`` (0600) when there is one; never touches the original."""
    source = user_home / AUTH_FILE
    if not source.is_file():
        return False
    target = destination / AUTH_FILE
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as out, source.open("rb") as src:
        shutil.copyfileobj(src, out)
    target.chmod(0o600)
    return True


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


def prepare(
    sandbox: AttemptSandbox,
    *,
    mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
    skill_instructions: bool = True,
    environ: Mapping[str, str] | None = None,
) -> PreparedHome:
    """Write the attempt's CODEX_HOME (config, auth) and build the run's environment."""
    env_source = os.environ if environ is None else environ
    user_home = codex_config.user_codex_home(sandbox.real_home, env_source)
    user = codex_config.load_user_config(user_home)
    home = codex_home(sandbox)
    home.mkdir(parents=True, exist_ok=True)
    written = codex_config.attempt_config(
        user,
        mcp_servers=mcp_servers,
        skill_instructions=skill_instructions,
        hidden_skills=hidden_skill_entries(home),
    )
    codex_config.write_config(written, home)
    if codex_config.needs_openai_login(written):
        copy_auth(user_home, home)
    env = dict(sandbox.base_env)
    env.update(forwarded_env(user, env_source))
    env["HOME"] = str(sandbox.home)
    env["CODEX_HOME"] = str(home)
    return PreparedHome(codex_home=home, config=written, env=env)
