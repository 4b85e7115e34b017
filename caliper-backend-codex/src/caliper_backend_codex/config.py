"""The attempt's ``config.toml``: the user's own config, minus what is personal, plus ours.

Kept from the user's config: model, provider and provider definitions (so a custom
``model_providers`` entry keeps working), profiles, reasoning and shell settings. Removed:
``mcp_servers`` (replaced by the spec's), ``skills`` (only the neighbourhood may be visible),
``notify`` and ``hooks`` (they would run the user's programs), ``projects`` (trust entries)
and ``plugins``. Forced: analytics off, plugins and ChatGPT apps (connectors) off, bundled
skills off, OpenTelemetry exporters off (each of these otherwise calls home at start-up or
hands the agent tools from the user's account), and at most
``MAX_RETRIES`` request and stream retries on every custom provider.

The file is parsed with ``tomllib`` and written with ``tomli_w``: never edited line by line.
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import tomli_w

from caliper.plugin import SetupError
from caliper.plugin.private_files import write_private

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CONFIG_NAME = "config.toml"
MAX_RETRIES = 2
PERSONAL_KEYS = (
    "mcp_servers",
    "skills",
    "notify",
    "hooks",
    "projects",
    "plugins",
    # The user's own standing instructions would steer attempts and judges alike.
    "instructions",
    "developer_instructions",
    "model_instructions_file",
    "experimental_instructions_file",
)
RETRY_KEYS = ("request_max_retries", "stream_max_retries")
OTEL_OFF = {"exporter": "none", "metrics_exporter": "none", "trace_exporter": "none"}


def user_codex_home(real_home: Path, environ: Mapping[str, str] | None = None) -> Path:
    """The user's Codex folder: ``$CODEX_HOME`` of the caliper process, else ``~/.codex``."""
    env = os.environ if environ is None else environ
    configured = env.get("CODEX_HOME")
    return Path(configured).expanduser() if configured else real_home / ".codex"


def load_user_config(codex_home: Path) -> dict[str, Any]:
    """The user's parsed ``config.toml`` (empty when there is none)."""
    path = codex_home / CONFIG_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SetupError(
            f"Cannot read your Codex config {path}: {exc.strerror or exc}.",
            hint="Fix its permissions, or point CODEX_HOME at another Codex folder.",
        ) from exc
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SetupError(
            f"Your Codex config {path} is not valid TOML ({exc}).",
            hint="Fix the file (codex itself refuses to start with it), then run caliper again.",
        ) from exc


def _table(config: dict[str, Any], key: str) -> dict[str, Any]:
    value = config.get(key)
    if not isinstance(value, dict):
        value = {}
        config[key] = value
    return value


def _bound_retries(provider: dict[str, Any]) -> None:
    for key in RETRY_KEYS:
        value = provider.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or value > MAX_RETRIES:
            provider[key] = MAX_RETRIES
        elif value < 0:
            provider[key] = 0


def _strip_personal(config: dict[str, Any]) -> None:
    for key in PERSONAL_KEYS:
        config.pop(key, None)
    profiles = config.get("profiles")
    if isinstance(profiles, dict):
        for profile in profiles.values():
            if isinstance(profile, dict):
                for key in PERSONAL_KEYS:
                    profile.pop(key, None)


NEVER_KEPT = ("projects", "plugins")
"""Stripped even with the user's setup loaded: trust entries and plugins (not copied)."""


def kept_personal_keys(user: Mapping[str, Any]) -> list[str]:
    """The personal settings a ``--user-customizations`` attempt keeps from ``config.toml``."""
    return [k for k in PERSONAL_KEYS if k in user and k not in NEVER_KEPT and k != "skills"]


def attempt_config(
    user: Mapping[str, Any],
    *,
    mcp_servers: Mapping[str, Mapping[str, Any]] | None = None,
    skill_instructions: bool = True,
    hidden_skills: Sequence[Mapping[str, Any]] = (),
    keep_personal: bool = False,
) -> dict[str, Any]:
    """The config an attempt (or a judge call, ``skill_instructions=False``) runs with.

    ``hidden_skills`` are ``skills.config`` entries (``path``, ``enabled = false``) for
    ``SKILL.md`` files that must not be listed as skills (nested inside a declared one).
    ``keep_personal`` (``--user-customizations``) keeps the user's instructions, ``notify``,
    ``hooks`` and MCP servers (the spec's servers win on a name clash); trust entries,
    plugins and the bundled skills stay off.
    """
    config = copy.deepcopy(dict(user))
    personal = {k: config[k] for k in PERSONAL_KEYS if k in config}
    _strip_personal(config)
    if keep_personal:
        for key in kept_personal_keys(user):
            if key != "mcp_servers":
                config[key] = personal[key]
        own = personal.get("mcp_servers")
        if isinstance(own, dict) and own:
            mcp_servers = {**own, **(mcp_servers or {})}
    _table(config, "analytics")["enabled"] = False
    features = _table(config, "features")
    features["plugins"] = False
    features["apps"] = False
    config["otel"] = dict(OTEL_OFF)
    skills: dict[str, Any] = {"bundled": {"enabled": False}}
    if not skill_instructions:
        skills["include_instructions"] = False
    if hidden_skills:
        skills["config"] = [dict(entry) for entry in hidden_skills]
    config["skills"] = skills
    providers = config.get("model_providers")
    if isinstance(providers, dict):
        for provider in providers.values():
            if isinstance(provider, dict):
                _bound_retries(provider)
    if mcp_servers:
        config["mcp_servers"] = {name: dict(table) for name, table in mcp_servers.items()}
    return config


def provider_variables(config: Mapping[str, Any]) -> set[str]:
    """Environment variables the configured providers read their credentials from."""
    names: set[str] = set()
    providers = config.get("model_providers")
    if not isinstance(providers, Mapping):
        return names
    for provider in providers.values():
        if not isinstance(provider, Mapping):
            continue
        env_key = provider.get("env_key")
        if isinstance(env_key, str) and env_key:
            names.add(env_key)
        headers = provider.get("env_http_headers")
        if isinstance(headers, Mapping):
            names.update(v for v in headers.values() if isinstance(v, str) and v)
    return names


BUILT_IN_OPENAI = "openai"


def active_provider(config: Mapping[str, Any]) -> str:
    """The provider id a run uses: the selected profile's, else ``model_provider``."""
    provider = config.get("model_provider")
    profiles = config.get("profiles")
    selected = config.get("profile")
    if isinstance(profiles, Mapping) and isinstance(selected, str):
        profile = profiles.get(selected)
        if isinstance(profile, Mapping) and isinstance(profile.get("model_provider"), str):
            provider = profile["model_provider"]
    return provider if isinstance(provider, str) and provider else BUILT_IN_OPENAI


def needs_openai_login(config: Mapping[str, Any]) -> bool:
    """Whether the run authenticates with the user's OpenAI login (``auth.json``).

    True for the built-in ``openai`` provider and for custom providers that set
    ``requires_openai_auth``; a custom gateway with its own key does not need the login, and
    copying it would switch Codex into ChatGPT mode (extra calls to chatgpt.com).
    """
    provider = active_provider(config)
    if provider == BUILT_IN_OPENAI:
        return True
    providers = config.get("model_providers")
    table = providers.get(provider) if isinstance(providers, Mapping) else None
    return isinstance(table, Mapping) and table.get("requires_openai_auth") is True


def uses_aws(config: Mapping[str, Any]) -> bool:
    """Whether a provider authenticates with AWS credentials (so ``AWS_*`` must pass)."""
    providers = config.get("model_providers")
    return isinstance(providers, Mapping) and any(
        isinstance(p, Mapping) and "aws" in p for p in providers.values()
    )


def write_config(config: Mapping[str, Any], codex_home: Path) -> Path:
    """Write ``config.toml`` with mode 0600 (it holds the user's provider settings)."""
    return write_private(codex_home / CONFIG_NAME, tomli_w.dumps(dict(config)))
