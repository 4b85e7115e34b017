"""The environment and home folder one ``claude`` run sees.

Every run gets the sandbox's fresh HOME. From the user's real setup only what authentication
needs is carried over (see ``docs/backends/claude-code.md`` for the full list):

* from the caliper process environment: provider and credential variables (``ANTHROPIC_*``,
  ``CLAUDE_CODE_OAUTH_TOKEN``, ``CLAUDE_CODE_USE_*`` with the AWS/Google/Foundry variables they
  need, proxies and CA bundles);
* from the real Claude config folder (``$CLAUDE_CONFIG_DIR`` or ``~/.claude``):
  ``.credentials.json`` (subscription login), the ``env`` entries of ``settings.json`` that pass
  the same filter, and its credential helpers (``apiKeyHelper``, ``awsAuthRefresh``,
  ``awsCredentialExport``);
* from the real ``~/.claude.json``: only ``primaryApiKey`` and ``oauthAccount`` (a Console key
  stored by ``/login``, and the account it belongs to).

Nothing else is read: no MCP servers, skills, plugins, hooks, agents, CLAUDE.md or memory.
With ``--user-customizations``, :func:`load_user_setup` also brings in the user's skills,
rules files, settings and user-scope MCP servers (never history nor memory).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from caliper.plugin.attempt import AttemptSandbox, UserSetup
from caliper.plugin.backend import copy_user_skills
from caliper.plugin.private_files import write_private

FORWARDED_NAMES = frozenset(
    {
        "CLAUDE_CODE_OAUTH_TOKEN",
        "CLAUDE_CODE_API_KEY_HELPER_TTL_MS",
        "CLAUDE_CODE_CLIENT_CERT",
        "CLAUDE_CODE_CLIENT_KEY",
        "CLAUDE_CODE_CLIENT_KEY_PASSPHRASE",
        "CLAUDE_CODE_MAX_RETRIES",
        "API_TIMEOUT_MS",
        "CLOUD_ML_REGION",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "GOOGLE_CLOUD_PROJECT",
        "GCLOUD_PROJECT",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        "NODE_EXTRA_CA_CERTS",
        "SSL_CERT_FILE",
    }
)
FORWARDED_PREFIXES = ("ANTHROPIC_", "AWS_", "VERTEX_REGION_", "CLAUDE_CODE_USE_")
SETTINGS_HELPERS = ("apiKeyHelper", "awsAuthRefresh", "awsCredentialExport")
ACCOUNT_KEYS = ("primaryApiKey", "oauthAccount")
DEFAULT_MAX_RETRIES = "2"
DISABLED_BUILTIN_PLUGINS = ("cc-plugin-plugin-authoring@builtin",)
"""Built-in plugins that would advertise a skill of their own next to the neighbourhood."""

QUIET_SWITCHES: Mapping[str, str] = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "CLAUDE_CODE_DISABLE_BUNDLED_SKILLS": "1",
    "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1",
}
"""Always set: no traffic besides model calls, no self-update, no bundled skills, no memory."""


def is_forwarded(name: str) -> bool:
    """Whether an environment variable is one authentication or the provider needs."""
    if name in FORWARDED_NAMES or name.startswith(FORWARDED_PREFIXES):
        return True
    return name.startswith("CLAUDE_CODE_SKIP_") and name.endswith("_AUTH")


def real_config_dir(real_home: Path, environ: Mapping[str, str]) -> Path:
    """Where the user's own Claude Code configuration lives."""
    configured = environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured).expanduser() if configured else real_home / ".claude"


def real_account_file(real_home: Path, environ: Mapping[str, str]) -> Path:
    """The user's ``.claude.json`` (inside ``$CLAUDE_CONFIG_DIR`` when that is set)."""
    configured = environ.get("CLAUDE_CONFIG_DIR")
    base = Path(configured).expanduser() if configured else real_home
    return base / ".claude.json"


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object from ``path``; anything unreadable counts as absent."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


MEMORY_FILES = ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md", ".claude/rules/**")


def outside_memory_files(workdir: Path) -> list[str]:
    """CLAUDE.md-style files in every folder above the workdir, for ``claudeMdExcludes``.

    Claude Code reads memory files from the working directory up to ``/``; the ones a task
    puts in its workdir are part of the task, the ones above it belong to whoever owns the
    temp folder and must not reach the agent.
    """
    parents: list[Path] = []
    for base in (workdir, workdir.resolve()):
        parents += [p for p in base.parents if p not in parents]
    return [str(parent / name) for parent in parents for name in MEMORY_FILES]


def seed_home(sandbox: AttemptSandbox, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Copy authentication into the sandbox HOME; return the settings ``env`` to apply.

    Writes ``<home>/.claude/settings.json`` (the user's credential helpers, and built-in plugins
    that bring their own skills switched off), and ``<home>/.claude/.credentials.json`` and
    ``<home>/.claude.json`` (account keys only) when the user has them.
    """
    environ = os.environ if environ is None else environ
    source = real_config_dir(sandbox.real_home, environ)
    target = sandbox.home / ".claude"
    target.mkdir(parents=True, exist_ok=True)

    with contextlib.suppress(OSError):
        credentials = (source / ".credentials.json").read_text(encoding="utf-8")
        write_private(target / ".credentials.json", credentials)

    settings = _read_json(source / "settings.json")
    own: dict[str, Any] = {
        k: settings[k] for k in SETTINGS_HELPERS if isinstance(settings.get(k), str)
    }
    own["enabledPlugins"] = {name: False for name in DISABLED_BUILTIN_PLUGINS}
    own["claudeMdExcludes"] = outside_memory_files(sandbox.workdir)
    write_private(target / "settings.json", json.dumps(own, indent=2))

    account = _read_json(real_account_file(sandbox.real_home, environ))
    kept: dict[str, Any] = {k: account[k] for k in ACCOUNT_KEYS if k in account}
    if kept:
        write_private(sandbox.home / ".claude.json", json.dumps(kept, indent=2))

    settings_env = settings.get("env")
    if not isinstance(settings_env, Mapping):
        return {}
    return {
        str(k): str(v)
        for k, v in settings_env.items()
        if is_forwarded(str(k)) and isinstance(v, (str, int, float)) and not isinstance(v, bool)
    }


def cloud_credential_files(real_home: Path, env: Mapping[str, str]) -> dict[str, str]:
    """Point Bedrock/Vertex SDKs at the user's real credential files, which HOME now hides.

    Only when that provider is switched on, the variable is not already set, and the file
    exists. The files are referenced in place, not copied.
    """
    found: dict[str, str] = {}
    candidates: list[tuple[str, Path]] = []
    if env.get("CLAUDE_CODE_USE_BEDROCK") not in (None, "", "0"):
        candidates += [
            ("AWS_CONFIG_FILE", real_home / ".aws" / "config"),
            ("AWS_SHARED_CREDENTIALS_FILE", real_home / ".aws" / "credentials"),
        ]
    if env.get("CLAUDE_CODE_USE_VERTEX") not in (None, "", "0"):
        adc = real_home / ".config" / "gcloud" / "application_default_credentials.json"
        candidates.append(("GOOGLE_APPLICATION_CREDENTIALS", adc))
    for name, path in candidates:
        if name not in env and path.is_file():
            found[name] = str(path)
    return found


def build_env(
    sandbox: AttemptSandbox,
    settings_env: Mapping[str, str],
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The complete environment for one run.

    Order, later wins: the sandbox's minimal env, forwarded variables of the caliper process,
    forwarded ``env`` entries of the user's settings (Claude Code itself lets those win), then
    caliper's fixed switches. ``CLAUDE_CONFIG_DIR`` is never passed, so the CLI uses
    ``<sandbox home>/.claude``.
    """
    environ = os.environ if environ is None else environ
    env = dict(sandbox.base_env)
    env.update({k: v for k, v in environ.items() if is_forwarded(k)})
    env.update(settings_env)
    env.update(cloud_credential_files(sandbox.real_home, env))
    env.setdefault("CLAUDE_CODE_MAX_RETRIES", DEFAULT_MAX_RETRIES)
    env.update(QUIET_SWITCHES)
    env["HOME"] = str(sandbox.home)
    env.pop("CLAUDE_CONFIG_DIR", None)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"
    return env


MEMORY_SWITCHES = ("CLAUDE_CODE_DISABLE_AUTO_MEMORY",)
"""Kept by caliper even with the user's settings loaded: memory never reaches an attempt."""
OWN_SETTINGS = ("claudeMdExcludes",)
"""Settings caliper writes that the user's own settings extend rather than replace."""


@attrs.frozen
class UserSetupPlan:
    """The user's own setup, installed into one sandbox: what to add to the run and a record."""

    mcp_argv: tuple[str, ...]
    setup: UserSetup
    skill_names: tuple[str, ...]


def _user_rules(source: Path, target: Path) -> list[str]:
    """Copy the user-scope rules (``CLAUDE.md``, ``rules/*.md``); their names as ``~/.claude/…``."""
    loaded: list[str] = []
    candidates = [source / "CLAUDE.md"]
    rules = source / "rules"
    if rules.is_dir():
        candidates += sorted(p for p in rules.rglob("*.md") if p.is_file())
    for path in candidates:
        if not path.is_file():
            continue
        relative = path.relative_to(source)
        destination = target / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            destination.write_bytes(path.read_bytes())
            loaded.append(f"~/.claude/{relative.as_posix()}")
    return loaded


def _user_settings(source: Path, target: Path) -> list[str]:
    """Merge the user's ``settings.json`` into the sandbox's (caliper's exclusions extended,
    its memory switch kept); the keys taken, as ``settings.json: key, …``."""
    settings = _read_json(source / "settings.json")
    if not settings:
        return []
    own = _read_json(target / "settings.json")
    merged = {**own, **settings}
    for key in OWN_SETTINGS:
        theirs = settings.get(key) if isinstance(settings.get(key), list) else []
        merged[key] = [*own.get(key, []), *theirs]
    env = merged.get("env")
    if isinstance(env, Mapping):
        merged["env"] = {k: v for k, v in env.items() if k not in MEMORY_SWITCHES}
    merged.pop("autoMemoryEnabled", None)
    write_private(target / "settings.json", json.dumps(merged, indent=2))
    return [f"settings.json: {', '.join(sorted(str(k) for k in settings))}"]


def _user_mcp(
    sandbox: AttemptSandbox, environ: Mapping[str, str], declared: Sequence[str]
) -> tuple[list[str], list[str], tuple[str, ...]]:
    """The user-scope MCP servers of ``~/.claude.json`` minus declared names, written to a
    private ``--mcp-config`` file; (loaded names, notes, argv)."""
    servers = _read_json(real_account_file(sandbox.real_home, environ)).get("mcpServers")
    if not isinstance(servers, Mapping) or not servers:
        return [], [], ()
    kept = {str(k): v for k, v in servers.items() if str(k) not in set(declared)}
    notes = [
        f"user MCP server {name}: the spec's server of that name wins"
        for name in servers
        if str(name) in set(declared)
    ]
    if not kept:
        return [], notes, ()
    path = sandbox.private / "user-mcp.json"
    write_private(path, json.dumps({"mcpServers": kept}, indent=2))
    return sorted(kept), notes, ("--mcp-config", str(path))


def load_user_setup(
    sandbox: AttemptSandbox,
    *,
    declared_mcp: Sequence[str] = (),
    environ: Mapping[str, str] | None = None,
) -> UserSetupPlan:
    """Install what the user's own ``claude`` would load by itself into the sandbox HOME.

    Called after :func:`seed_home` for ``--user-customizations``: user-level skills (a
    declared skill of the same name wins), ``CLAUDE.md`` and ``rules/`` at user scope, the
    user's ``settings.json`` (merged over caliper's; auto memory stays off) and the user-scope
    MCP servers of ``~/.claude.json`` (a declared server of the same name wins). Never the
    session history (``projects/``, ``history.jsonl``) nor memory. Built-in plugins are
    switched back on, since the user's CLI has them.
    """
    environ = os.environ if environ is None else environ
    source = real_config_dir(sandbox.real_home, environ)
    target = sandbox.home / ".claude"
    copied = copy_user_skills([source / "skills"], target / "skills")
    skills, notes = list(copied.names), list(copied.notes)
    rules = _user_rules(source, target)
    settings = _user_settings(source, target)
    own = _read_json(target / "settings.json")
    plugins = own.get("enabledPlugins")
    if isinstance(plugins, dict):
        for name in DISABLED_BUILTIN_PLUGINS:
            plugins.pop(name, None)
        write_private(target / "settings.json", json.dumps(own, indent=2))
    servers, mcp_notes, argv = _user_mcp(sandbox, environ, declared_mcp)
    setup = UserSetup(
        skills=tuple(skills),
        rules=tuple(rules),
        settings=tuple(settings),
        mcp=tuple(servers),
        not_loaded=tuple(notes + mcp_notes),
    )
    return UserSetupPlan(mcp_argv=argv, setup=setup, skill_names=tuple(skills))


def with_bundled_skills(env: dict[str, str]) -> dict[str, str]:
    """``env`` with the CLI's bundled skills switched back on (the user's CLI has them)."""
    env.pop("CLAUDE_CODE_DISABLE_BUNDLED_SKILLS", None)
    return env
