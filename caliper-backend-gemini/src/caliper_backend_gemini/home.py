"""The attempt's Gemini CLI home: ``settings.json`` and the environment ``gemini`` runs with.

``GEMINI_CLI_HOME`` is the sandbox home, so ``~/.gemini`` (settings, skills, sessions, the
temp folder) is the attempt's own. ``settings.json`` sets: API-key auth when a key is given
(``GEMINI_API_KEY`` / ``GOOGLE_API_KEY``), else the user's own ``security.auth`` with their
OAuth credentials copied in; ``general.maxAttempts = 1`` (caliper owns retrying); telemetry,
usage statistics and update checks off; the CLI's built-in skills off; and the spec's
``mcpServers``.

Gemini CLI expands ``$VAR`` and ``${VAR}`` in every string of ``settings.json`` from its
environment. Secrets are therefore written as references (their values travel in the
environment only), and a literal ``$`` anywhere else is refused rather than expanded.

It also loads the first ``.gemini/.env`` or ``.env`` it finds searching upward from its working
folder. Empty ``.gemini/.env`` and ``.env`` files planted in the sandbox root (the parent of
the working folder) stop that search there, so no ``.env`` of the user's above the sandbox
reaches the CLI (one the task puts in the working folder itself is still read).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from caliper.plugin import SetupError
from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.private_files import copy_private
from caliper_backend_gemini.skills import gemini_dir

SETTINGS_FILE = "settings.json"
OAUTH_FILE = "oauth_creds.json"
API_KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
BUILT_IN_SKILLS = ("skill-creator", "antigravity-support")
"""The skills Gemini CLI 0.61.0 ships (``bundle/builtin``); switched off (``skills.disabled``)."""
FORWARDED = (
    *API_KEY_VARIABLES,
    "GOOGLE_GEMINI_BASE_URL",
    "GOOGLE_VERTEX_BASE_URL",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_GCA",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "NO_PROXY",
    "https_proxy",
    "http_proxy",
    "no_proxy",
)
"""Variables of caliper's environment passed on to ``gemini`` (credentials and endpoints)."""
QUIET = {
    "GEMINI_CLI_NO_RELAUNCH": "true",
    "GEMINI_CLI_TRUST_WORKSPACE": "true",
    "NO_COLOR": "1",
    "NO_BROWSER": "true",
}
"""No second node process, the sandbox trusted, no colours, never a browser for login."""


@attrs.frozen
class HomeSeed:
    """What :func:`seed` wrote: the settings (without MCP servers) and the environment."""

    settings: Mapping[str, Any]
    env: Mapping[str, str]


def user_gemini_dir(real_home: Path, environ: Mapping[str, str]) -> Path:
    """The user's own ``.gemini`` folder (``$GEMINI_CLI_HOME/.gemini``, else ``~/.gemini``)."""
    base = environ.get("GEMINI_CLI_HOME")
    return (Path(base).expanduser() if base else real_home) / ".gemini"


def read_user_settings(folder: Path) -> dict[str, Any]:
    """The user's ``settings.json`` as a mapping (empty when missing or unreadable)."""
    try:
        data = json.loads((folder / SETTINGS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def user_auth_type(settings: Mapping[str, Any]) -> str | None:
    """``security.auth.selectedType`` of a settings mapping."""
    security = settings.get("security")
    auth = security.get("auth") if isinstance(security, Mapping) else None
    kind = auth.get("selectedType") if isinstance(auth, Mapping) else None
    return kind if isinstance(kind, str) and kind else None


def base_settings(auth_type: str | None) -> dict[str, Any]:
    """The settings every run gets (auth chosen by :func:`seed`)."""
    settings: dict[str, Any] = {
        "general": {"maxAttempts": 1, "enableAutoUpdate": False,
                    "enableAutoUpdateNotification": False},
        "telemetry": {"enabled": False, "logPrompts": False},
        "privacy": {"usageStatisticsEnabled": False},
        "ui": {"hideTips": True, "hideBanner": True},
        "skills": {"enabled": True, "disabled": list(BUILT_IN_SKILLS)},
    }  # fmt: skip
    if auth_type:
        settings["security"] = {"auth": {"selectedType": auth_type}}
    return settings


def run_env(sandbox: AttemptSandbox, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment ``gemini`` runs with in ``sandbox``."""
    env = dict(sandbox.base_env)
    env.update({name: environ[name] for name in FORWARDED if environ.get(name)})
    env.update(QUIET)
    env.update({"HOME": str(sandbox.home), "GEMINI_CLI_HOME": str(sandbox.home)})
    return env


def seed(sandbox: AttemptSandbox, environ: Mapping[str, str] | None = None) -> HomeSeed:
    """``~/.gemini`` with its settings (and the user's OAuth login when no key is set)."""
    environ = os.environ if environ is None else environ
    folder = gemini_dir(sandbox)
    folder.mkdir(parents=True, exist_ok=True)
    if any(environ.get(name) for name in API_KEY_VARIABLES):
        auth = "gemini-api-key"
    else:
        user = user_gemini_dir(sandbox.real_home, environ)
        auth = user_auth_type(read_user_settings(user))
        copy_private(user / OAUTH_FILE, folder / OAUTH_FILE)
    settings = base_settings(auth)
    write_settings(sandbox, settings)
    fence_env_files(sandbox.root)
    return HomeSeed(settings=settings, env=run_env(sandbox, environ))


def with_mcp(sandbox: AttemptSandbox, seeded: HomeSeed, servers: Mapping[str, Any]) -> None:
    """Rewrite ``settings.json`` with the spec's ``mcpServers`` added."""
    write_settings(sandbox, {**seeded.settings, "mcpServers": dict(servers)})


def write_settings(
    sandbox: AttemptSandbox, settings: Mapping[str, Any], allowed: tuple[str, ...] = ()
) -> None:
    """Write ``~/.gemini/settings.json``, refusing any ``$`` Gemini CLI would expand except the
    ``allowed`` references (the user's own, with ``--user-customizations``)."""
    check_no_references(settings, allowed=allowed)
    path = gemini_dir(sandbox) / SETTINGS_FILE
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")


def check_no_references(value: Any, where: str = "settings", allowed: tuple[str, ...] = ()) -> None:
    """Raise :class:`SetupError` for a ``$`` in a string that is not a caliper secret reference."""
    if isinstance(value, str):
        rest = value
        for reference in allowed:
            rest = rest.replace(reference, "")
        if "$" in rest.replace("${CALIPER_MCP_SECRET_", ""):
            raise SetupError(
                f"Gemini CLI would expand the '$' in {where} ({value!r}) from its environment.",
                hint="Remove the '$' or pass that value through a ${VAR} the spec resolves.",
            )
    elif isinstance(value, Mapping):
        for key, item in value.items():
            check_no_references(item, f"{where}.{key}", allowed)
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            check_no_references(item, f"{where}[{index}]", allowed)


def fence_env_files(root: Path) -> None:
    """Empty ``.gemini/.env`` and ``.env`` in the sandbox ``root``, so Gemini CLI's upward
    search for an ``.env`` ends inside the sandbox."""
    for path in (root / ".gemini" / ".env", root / ".env"):
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("", encoding="utf-8")
