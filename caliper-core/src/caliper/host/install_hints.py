"""Commands that add a Caliper distribution to the install this ``caliper`` runs from.

A hint that says ``pipx install caliper-eval`` installs whatever PyPI calls ``caliper-eval``,
which need not be this project. So every command here pins the distribution to the running
version (``==<version>``) and is written for the way this install was made:

* a development checkout (``caliper-core`` installed editable by ``uv sync``): re-run
  ``scripts/setup`` there, which installs every workspace member;
* a pipx venv (``pipx_metadata.json`` beside the interpreter): ``pipx inject`` into that venv,
  with the ``--find-links`` folder pipx recorded when Caliper was installed from a wheel folder;
* a uv tool venv (``uv-receipt.toml``): ``uv pip install --python <that interpreter>``;
* any other environment: ``<its python> -m pip install``.

The wheel folder is read from pipx's record or from the PEP 610 ``direct_url.json`` of a wheel
installed by path. Where no folder is recorded (pip with ``--find-links`` records none), the
command names a placeholder for it and says when it can be left out.
"""

from __future__ import annotations

import json
import shlex
import sys
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

import caliper
from caliper.system import attrs_classes

OUR_DISTRIBUTIONS = (
    "caliper-eval",
    "caliper-core",
    "caliper-backend-claude",
    "caliper-backend-codex",
    "caliper-backend-pi",
    "caliper-backend-hermes",
    "caliper-judge-llm",
    "caliper-executor-ray",
)
"""The distributions this project publishes (the workspace members but the test-only one)."""

WHEEL_FOLDER_PLACEHOLDER = "<the folder with the Caliper wheels>"


@attrs_classes.frozen
class InstallSource:
    """How the running Caliper was installed, as far as the environment records it."""

    kind: str
    """``checkout``, ``pipx``, ``uv-tool`` or ``pip``."""
    version: str
    python: str
    """The interpreter of the environment Caliper runs in."""
    wheel_folder: str | None = None
    """The folder Caliper's wheels were installed from, when recorded."""
    checkout: str | None = None
    """The checkout's root, for a development install."""
    pipx_venv: str | None = None
    """The pipx venv's name (what ``pipx inject`` takes), for a pipx install."""


def _version() -> str:
    return caliper.__version__


def _direct_url(name: str) -> dict | None:
    """The PEP 610 ``direct_url.json`` of an installed distribution, if it has one."""
    try:
        text = metadata.distribution(name).read_text("direct_url.json")
    except (metadata.PackageNotFoundError, OSError):
        return None
    try:
        data = json.loads(text or "")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _file_path(url: object) -> Path | None:
    if not isinstance(url, str) or not url.startswith("file:"):
        return None
    return Path(unquote(urlparse(url).path))


def _pipx_find_links(metadata: dict) -> str | None:
    packages = [metadata.get("main_package") or {}]
    packages += list((metadata.get("injected_packages") or {}).values())
    for package in packages:
        args = package.get("pip_args") if isinstance(package, dict) else None
        if not isinstance(args, list):
            continue
        for index, arg in enumerate(args):
            if not isinstance(arg, str):
                continue
            if arg in ("--find-links", "-f") and index + 1 < len(args):
                return str(args[index + 1])
            if arg.startswith("--find-links="):
                return arg.split("=", 1)[1]
    return None


def detect(prefix: str | None = None, python: str | None = None) -> InstallSource:
    """How the running Caliper was installed (``prefix``: the environment, default ours)."""
    root = Path(prefix or sys.prefix)
    python = python or sys.executable
    version = _version()
    core = _direct_url("caliper-core")
    if core and (core.get("dir_info") or {}).get("editable"):
        path = _file_path(core.get("url"))
        checkout = str(path.parent) if path is not None else None
        return InstallSource("checkout", version, python, checkout=checkout)
    folder = None
    for name in ("caliper-eval", "caliper-core"):
        data = _direct_url(name)
        path = _file_path(data.get("url")) if data else None
        if path is not None and path.suffix == ".whl":
            folder = str(path.parent)
            break
    try:
        metadata = json.loads((root / "pipx_metadata.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        metadata = None
    if isinstance(metadata, dict):
        folder = _pipx_find_links(metadata) or folder
        return InstallSource("pipx", version, python, folder, pipx_venv=root.name)
    kind = "uv-tool" if (root / "uv-receipt.toml").is_file() else "pip"
    return InstallSource(kind, version, python, folder)


def _command(source: InstallSource, requirement: str, folder: str | None) -> str:
    quoted = shlex.quote(requirement)
    if source.kind == "pipx":
        links = (
            f"--pip-args={shlex.quote('--find-links ' + shlex.quote(folder))} " if folder else ""
        )
        return f"pipx inject {links}{shlex.quote(source.pipx_venv or 'caliper-eval')} {quoted}"
    links = f"--find-links {shlex.quote(folder)} " if folder else ""
    if source.kind == "uv-tool":
        return f"uv pip install --python {shlex.quote(source.python)} {links}{quoted}"
    return f"{shlex.quote(source.python)} -m pip install {links}{quoted}"


def add_distribution(distribution: str, source: InstallSource | None = None) -> str:
    """The command (or commands, as one sentence) that add ``distribution`` to this install."""
    source = source or detect()
    if source.kind == "checkout":
        where = f" in {source.checkout}" if source.checkout else ""
        return (
            f"this is a development install: run scripts/setup{where}, which installs every "
            f"Caliper distribution ({distribution} among them)"
        )
    requirement = f"{distribution}=={source.version}"
    if source.wheel_folder:
        return _command(source, requirement, source.wheel_folder)
    return (
        f"{_command(source, requirement, WHEEL_FOLDER_PLACEHOLDER)} (the folder you installed "
        "Caliper's wheels from, e.g. a checkout's dist/ made by scripts/build-dist; leave out "
        "--find-links once this version is on PyPI)"
    )
