"""The pre-flight login check: would Claude Code authenticate in an attempt?

Without a login every attempt fails at its first model call, k times over. Before any attempt
caliper asks Claude Code itself (``claude auth status``, which answers offline in JSON) in a
throw-away sandbox seeded exactly as an attempt's (the user's ``.credentials.json``, credential
helpers and account keys, the forwarded variables such as ``ANTHROPIC_API_KEY``), so the answer
is the one every attempt would get and the user's own Claude folder is never written to.

When that environment already carries a credential Claude Code takes as a login
(:data:`LOGIN_VARIABLES`, no other API provider switched on), its answer is known and the CLI
is not asked: ``claude auth status`` reports ``loggedIn: true`` for each of them whatever else
the home holds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import attrs

from caliper.plugin import SetupError, run_process
from caliper_backend_claude import home

STATUS_TIMEOUT = 30.0
LOGIN_VARIABLES = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")
"""Variables ``claude auth status`` counts as a login on their own (the pinned CLI says
``loggedIn: true``, ``authMethod`` ``api_key`` or ``oauth_token``, for each)."""

NOT_LOGGED_IN = (
    "Claude Code is not logged in: `claude auth status` finds no login ({config} has no "
    "credentials) and no API key or token in the environment caliper runs in, so every "
    "attempt would fail to authenticate."
)
NOT_LOGGED_IN_HINT = (
    "Log in with `claude /login` (Claude subscription) or set ANTHROPIC_API_KEY in the "
    "environment caliper runs in, then run caliper again."
)


def login_in_env(env: Mapping[str, str]) -> bool:
    """Whether ``env`` (an attempt's) holds a login by itself: a non-empty
    :data:`LOGIN_VARIABLES` entry, with the first-party API (no ``CLAUDE_CODE_USE_*`` provider
    switch on, whose own credentials the CLI would check instead)."""
    providers = [
        k for k, v in env.items() if k.startswith("CLAUDE_CODE_USE_") and v not in ("", "0")
    ]
    return not providers and any(env.get(name, "").strip() for name in LOGIN_VARIABLES)


def logged_in(cli: Path, real_home: Path) -> bool | None:
    """Claude Code's answer for an attempt's sandbox (known without asking when the sandbox's
    environment holds a login, see :func:`login_in_env`); ``None`` when it gives none."""
    from caliper.plugin.sandbox import make_sandbox, remove_sandbox

    made = make_sandbox(spec_dir=Path.cwd(), prefix="caliper-login-check-")
    sandbox = attrs.evolve(made, real_home=real_home)
    try:
        env = home.build_env(sandbox, home.seed_home(sandbox))
        if login_in_env(env):
            return True
        result = run_process(
            [str(cli), "auth", "status"], env=env, cwd=sandbox.workdir, timeout=STATUS_TIMEOUT
        )
    except OSError:
        return None
    finally:
        remove_sandbox(made)
    try:
        answer = json.loads(result.stdout)
    except ValueError:
        return None
    value = answer.get("loggedIn") if isinstance(answer, dict) else None
    return value if isinstance(value, bool) else None


def check_login(cli: Path | None, real_home: Path) -> None:
    """Raise :class:`SetupError` (exit 3) when Claude Code says it is not logged in."""
    if cli is None or logged_in(cli, real_home) is not False:
        return
    import os

    config = home.real_config_dir(real_home, os.environ)
    raise SetupError(NOT_LOGGED_IN.format(config=config), hint=NOT_LOGGED_IN_HINT)
