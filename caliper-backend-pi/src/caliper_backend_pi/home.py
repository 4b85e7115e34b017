"""The isolated pi agent directory of one attempt, seeded from the user's own pi setup.

pi keeps everything in one "agent dir" (``~/.pi/agent``, or ``$PI_CODING_AGENT_DIR``). An
attempt gets a fresh one inside its sandbox home. Only what pi needs to reach the user's
model is copied: ``auth.json`` (logins and keys), ``models.json`` (custom providers) and
``settings.json`` with every resource list removed (skills, extensions, packages, prompt
templates, themes) and automatic retries forced off. Sessions, skills, extensions and the
user's global ``AGENTS.md`` stay behind, unless ``--user-customizations`` asks for the user's
skills (:func:`load_user_setup`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from caliper.plugin import SetupError
from caliper.plugin.attempt import AttemptSandbox, UserSetup
from caliper.plugin.backend import copy_user_skills
from caliper.plugin.private_files import copy_private, write_private

AGENT_DIR_VARIABLE = "PI_CODING_AGENT_DIR"

COPIED_FILES = ("auth.json", "models.json")

DROPPED_SETTINGS = (
    "packages",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "sessionDir",
    "npmCommand",
    "lastChangelogVersion",
)
"""Settings that would pull the user's own resources (or state) into an attempt."""

FORCED_SETTINGS: dict[str, Any] = {
    # One attempt must not spin for minutes on a failing provider: no agent-level retry
    # loop, and at most two quick SDK-level retries per request.
    "retry": {"enabled": False, "provider": {"maxRetries": 2, "maxRetryDelayMs": 10_000}},
    "quietStartup": True,
    "enableInstallTelemetry": False,
}

OFFLINE_ENV = {"PI_OFFLINE": "1", "PI_TELEMETRY": "0", "PI_SKIP_VERSION_CHECK": "1"}

PASSED_ENV = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "AZURE_OPENAI_BASE_URL",
    "AZURE_OPENAI_RESOURCE_NAME",
    "AZURE_OPENAI_API_VERSION",
    "AZURE_OPENAI_DEPLOYMENT_NAME_MAP",
    "DEEPSEEK_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_CLOUD_API_KEY",
    "GOOGLE_CLOUD_PROJECT",
    "GCLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GROQ_API_KEY",
    "CEREBRAS_API_KEY",
    "XAI_API_KEY",
    "FIREWORKS_API_KEY",
    "TOGETHER_API_KEY",
    "OPENROUTER_API_KEY",
    "AI_GATEWAY_API_KEY",
    "ZAI_API_KEY",
    "MISTRAL_API_KEY",
    "MINIMAX_API_KEY",
    "MINIMAX_CN_API_KEY",
    "MOONSHOT_API_KEY",
    "HF_TOKEN",
    "OPENCODE_API_KEY",
    "KIMI_API_KEY",
    "COPILOT_GITHUB_TOKEN",
    "CLOUDFLARE_API_KEY",
    "CLOUDFLARE_ACCOUNT_ID",
    "CLOUDFLARE_GATEWAY_ID",
    "XIAOMI_API_KEY",
    "XIAOMI_TOKEN_PLAN_CN_API_KEY",
    "XIAOMI_TOKEN_PLAN_AMS_API_KEY",
    "XIAOMI_TOKEN_PLAN_SGP_API_KEY",
    "AWS_PROFILE",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_BEARER_TOKEN_BEDROCK",
    "AWS_REGION",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
)
"""Provider credentials and network settings pi reads from the environment (``pi --help``)."""

_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]*$")


def agent_dir(sandbox: AttemptSandbox) -> Path:
    """Where pi's agent dir lives inside an attempt's sandbox."""
    return sandbox.home / ".pi" / "agent"


def skills_root(sandbox: AttemptSandbox) -> Path:
    """The global skills folder pi discovers in the attempt's agent dir."""
    return agent_dir(sandbox) / "skills"


def user_agent_dir(real_home: Path, environ: Mapping[str, str]) -> Path:
    """The user's own agent dir: ``$PI_CODING_AGENT_DIR`` when set, else ``~/.pi/agent``."""
    configured = environ.get(AGENT_DIR_VARIABLE)
    if configured:
        if configured == "~" or configured.startswith("~/"):
            return real_home / configured[2:]
        return Path(configured)
    return real_home / ".pi" / "agent"


def read_json_config(path: Path) -> dict[str, Any]:
    """A pi JSON config file as a dict (``{}`` when absent); a clear error when unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise SetupError(
            f"Could not read your pi configuration {path}: {exc}.",
            hint="Fix or remove the file (pi rewrites it when you change a setting in pi).",
        ) from exc
    if not isinstance(data, dict):
        raise SetupError(
            f"Your pi configuration {path} is not a JSON object.",
            hint="Fix or remove the file (pi rewrites it when you change a setting in pi).",
        )
    return data


def attempt_settings(user_settings: Mapping[str, Any]) -> dict[str, Any]:
    """The user's settings minus their resources, with retries off and telemetry off."""
    settings = {k: v for k, v in user_settings.items() if k not in DROPPED_SETTINGS}
    settings.update(json.loads(json.dumps(FORCED_SETTINGS)))
    return settings


def has_default_model(settings: Mapping[str, Any]) -> bool:
    """Whether pi settings name a model to use when none is given on the command line."""
    if settings.get("defaultProvider") and settings.get("defaultModel"):
        return True
    enabled = settings.get("enabledModels")
    return isinstance(enabled, list) and any(isinstance(m, str) and m for m in enabled)


def prepare_agent_dir(
    sandbox: AttemptSandbox, environ: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Seed the attempt's agent dir from the user's; return the settings written.

    Only reads the user's agent dir. Any skills an installer already put under the attempt's
    agent dir are left in place.
    """
    source = user_agent_dir(sandbox.real_home, os.environ if environ is None else environ)
    target = agent_dir(sandbox)
    target.mkdir(parents=True, exist_ok=True)
    for name in COPIED_FILES:
        copy_private(source / name, target / name)
    settings = attempt_settings(read_json_config(source / "settings.json"))
    write_private(target / "settings.json", json.dumps(settings, indent=2) + "\n")
    return settings


def foreign_skill_folders(sandbox: AttemptSandbox) -> list[Path]:
    """Non-empty ``.agents/skills`` folders above the attempt that pi would also load.

    pi scans ``.agents/skills`` in the working directory and every folder above it, up to the
    enclosing git repository's root (or ``/``). The sandbox normally lives in the system temp
    folder, where there are none; a ``CALIPER_TMPDIR`` inside a project can put some there.
    """
    start = Path(os.path.realpath(sandbox.workdir))
    root = Path(os.path.realpath(sandbox.root))
    chain = [start, *start.parents]
    git_root = next((d for d in chain if (d / ".git").exists()), None)
    found = []
    for folder in chain:
        candidate = folder / ".agents" / "skills"
        inside = candidate == root or root in candidate.parents
        if not inside and candidate.is_dir() and any(candidate.iterdir()):
            found.append(candidate)
        if folder == git_root:
            break
    return found


def check_no_foreign_skills(sandbox: AttemptSandbox) -> None:
    """Refuse to run when pi would mix skills from outside the attempt into it."""
    found = foreign_skill_folders(sandbox)
    if found:
        raise SetupError(
            f"pi would also load the skills in {found[0]}, which is above the attempt's "
            "working folder, so every attempt would see them next to the spec's skills.",
            hint=(
                f"Keep attempts out of that tree: point CALIPER_TMPDIR at a folder elsewhere "
                f"(attempts are currently created in {sandbox.root.parent})."
            ),
        )


def _models_env_names(models: Mapping[str, Any]) -> set[str]:
    """Names of environment variables that ``models.json`` uses as keys or header values."""
    names: set[str] = set()
    providers = models.get("providers")
    if not isinstance(providers, dict):
        return names
    for provider in providers.values():
        if not isinstance(provider, dict):
            continue
        values = [provider.get("apiKey")]
        headers = provider.get("headers")
        if isinstance(headers, dict):
            values.extend(headers.values())
        names.update(v for v in values if isinstance(v, str) and _ENV_NAME.match(v))
    return names


def attempt_env(
    sandbox: AttemptSandbox, environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The complete environment pi runs with for one attempt.

    The sandbox's minimal environment, the attempt's agent dir, pi's offline switches, and
    the provider credentials pi reads from the environment (those ``pi --help`` lists plus
    any variable the user's ``models.json`` names as a key or header).
    """
    source = os.environ if environ is None else environ
    env = dict(sandbox.base_env)
    models = read_json_config(agent_dir(sandbox) / "models.json")
    wanted = set(PASSED_ENV) | _models_env_names(models)
    for name in sorted(wanted):
        if name in source and name not in env:
            env[name] = source[name]
    env[AGENT_DIR_VARIABLE] = str(agent_dir(sandbox))
    env.update(OFFLINE_ENV)
    return env


NOT_LOADED = (
    "the global AGENTS.md is not loaded: pi runs with --no-context-files, which keeps the "
    "AGENTS.md/CLAUDE.md files of folders above the attempt out and drops the global one too",
    "extensions, packages, prompt templates, themes and SYSTEM.md/APPEND_SYSTEM.md stay out "
    "(extensions and packages run the user's code inside the attempt)",
    "pi has no user-level MCP configuration caliper reads, so only the spec's servers run",
)
"""What ``--user-customizations`` does not bring into a pi attempt, said in the run."""


def load_user_setup(sandbox: AttemptSandbox, environ: Mapping[str, str] | None = None) -> UserSetup:
    """Copy what the user's own pi loads by itself into the attempt's agent dir.

    For ``--user-customizations``: the user's global skills (``<agent dir>/skills`` and
    ``~/.agents/skills``; a declared skill of the same name wins). The global ``AGENTS.md``
    cannot come along (see :data:`NOT_LOADED`). Called before :func:`prepare_agent_dir`,
    which keeps skills in place. The settings stay as :func:`attempt_settings` makes them
    (resource lists dropped). Sessions are never copied.
    """
    source = user_agent_dir(sandbox.real_home, os.environ if environ is None else environ)
    root = skills_root(sandbox)
    root.mkdir(parents=True, exist_ok=True)
    copied = copy_user_skills([source / "skills", sandbox.real_home / ".agents" / "skills"], root)
    return UserSetup(skills=copied.names, not_loaded=(*copied.notes, *NOT_LOADED))
