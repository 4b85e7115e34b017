"""The pre-flight login check: can a ``codex`` run authenticate at all?

Without credentials ``codex exec`` does not fail: it retries the network until the attempt's
time budget is spent, k times over. So before any attempt, the user's setup is checked:

* the built-in ``openai`` provider (or a custom one with ``requires_openai_auth = true``)
  needs a ``codex login`` (``auth.json`` in the Codex folder) or an API key in
  ``OPENAI_API_KEY`` / ``CODEX_API_KEY``;
* a custom provider that names an ``env_key`` needs that variable set.

Any other provider (a local server without a key, a built-in open-source provider) passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from caliper.plugin import SetupError
from caliper_backend_codex import config as codex_config
from caliper_backend_codex.home import AUTH_FILE

API_KEY_VARIABLES = ("OPENAI_API_KEY", "CODEX_API_KEY")


def check_login(user_home: Path, user: Mapping[str, Any], environ: Mapping[str, str]) -> None:
    """Raise :class:`SetupError` (exit 3) when the configured provider has no credentials."""
    provider = codex_config.active_provider(user)
    if codex_config.needs_openai_login(user):
        if (user_home / AUTH_FILE).is_file() or any(environ.get(n) for n in API_KEY_VARIABLES):
            return
        raise SetupError(
            f"Codex is not logged in: there is no {user_home / AUTH_FILE} and neither "
            f"OPENAI_API_KEY nor CODEX_API_KEY is set (provider {provider!r}), so every "
            "attempt would only retry the network until it timed out.",
            hint="Run `codex login` (or set OPENAI_API_KEY), then run caliper again.",
        )
    providers = user.get("model_providers")
    table = providers.get(provider) if isinstance(providers, Mapping) else None
    env_key = table.get("env_key") if isinstance(table, Mapping) else None
    if isinstance(env_key, str) and env_key and not environ.get(env_key):
        raise SetupError(
            f"The Codex provider {provider!r} reads its API key from ${env_key}, which is not "
            "set, so every attempt would fail to authenticate.",
            hint=f"Set {env_key} in the environment caliper runs in, then run it again.",
        )
