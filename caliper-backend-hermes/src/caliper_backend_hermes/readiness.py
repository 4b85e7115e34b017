"""The pre-flight check: would Hermes start a session at all, or stop at its first-run setup?

With no provider configured (no API key, no login, no provider in ``config.yaml``), ``hermes
chat`` prints its whole setup banner and exits, k times over. Hermes decides that with its own
``_has_any_provider_configured()``; caliper asks that very function, in Hermes' own interpreter,
against a throw-away ``HERMES_HOME`` seeded exactly as an attempt's is (the user's ``.env``,
``auth.json`` and rewritten ``config.yaml``) and the same provider variables, so the answer is
the one every attempt would get and the user's own Hermes folder is never written to.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from caliper.plugin import SetupError, run_process
from caliper_backend_hermes.home import prepare_home, user_hermes_home
from caliper_backend_hermes.invocation import console_script_python

PROBE_TIMEOUT = 30.0
_ASK = (
    "import sys; sys.path = [p for p in sys.path if p]\n"
    "try:\n"
    "    from hermes_cli.main import _has_any_provider_configured as configured\n"
    "except Exception:\n"
    "    print('unknown'); raise SystemExit(0)\n"
    "print('yes' if configured() else 'no')\n"
)

NO_PROVIDER = (
    "Hermes has no model provider set up: it found no API key, login or provider in {home} "
    "(config.yaml, .env, auth.json) or in the environment, so every attempt would stop at "
    "Hermes' first-run setup without starting."
)
NO_PROVIDER_HINT = (
    "Run `hermes setup` (or `hermes model`) to choose a provider and log in, or set the "
    "provider's API key (e.g. OPENROUTER_API_KEY), then run caliper again."
)


def provider_configured(cli: Path, real_home: Path) -> bool | None:
    """Whether Hermes would find a provider in an attempt; ``None`` when it cannot be asked."""
    python = console_script_python(cli)
    if python is None:
        return None
    from caliper_backend_hermes.home import passed_variables

    scratch = Path(tempfile.mkdtemp(prefix="caliper-hermes-check-"))
    try:
        home = scratch / "hermes"
        prepare_home(home, user_hermes_home(real_home), version=None)
        (scratch / "home").mkdir()
        env = {"PATH": os.environ.get("PATH", os.defpath)}
        env.update(passed_variables(home / "config.yaml", os.environ))
        env.update(
            HOME=str(scratch / "home"),
            HERMES_HOME=str(home),
            HERMES_DISABLE_LAZY_INSTALLS="1",
            PYTHONDONTWRITEBYTECODE="1",
            NO_COLOR="1",
        )
        result = run_process([str(python), "-c", _ASK], env=env, cwd=scratch, timeout=PROBE_TIMEOUT)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    answer = result.stdout.strip().splitlines()[-1:] if result.returncode == 0 else []
    return {"yes": True, "no": False}.get(answer[0]) if answer else None


def check_provider(cli: Path | None, real_home: Path) -> None:
    """Raise :class:`SetupError` (exit 3) when Hermes would find no provider to call."""
    if cli is None or provider_configured(cli, real_home) is not False:
        return
    raise SetupError(NO_PROVIDER.format(home=user_hermes_home(real_home)), hint=NO_PROVIDER_HINT)
