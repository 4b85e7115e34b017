"""The first-party distributions: one version, exact sibling pins, the console script in core."""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

import pytest

import caliper

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = [
    "caliper-core",
    "caliper-eval",
    "caliper-backend-claude",
    "caliper-backend-codex",
    "caliper-backend-pi",
    "caliper-backend-hermes",
    "caliper-backend-gemini",
    "caliper-judge-llm",
    "caliper-executor-ray",
]
# The predecessor published caliper-eval up to 0.21.0; ours must sort above it on an index.
PREDECESSOR_NEWEST = (0, 21, 0)


def _pyprojects() -> dict[str, dict]:
    import tomllib

    found = {}
    for path in [*ROOT.glob("caliper-*/pyproject.toml"), ROOT / "tests/fakeagent/pyproject.toml"]:
        with path.open("rb") as handle:
            project = tomllib.load(handle)["project"]
        found[project["name"]] = project
    return found


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is 3.11+")
def test_every_distribution_has_one_version_above_the_predecessor_and_exact_sibling_pins():
    projects = _pyprojects()
    assert set(PUBLISHED) <= set(projects)
    versions = {name: project["version"] for name, project in projects.items()}
    assert set(versions.values()) == {caliper.__version__}, versions
    assert tuple(int(p) for p in caliper.__version__.split(".")) > PREDECESSOR_NEWEST
    for name, project in projects.items():
        requirements = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            requirements += extra
        for requirement in requirements:
            sibling = re.match(r"(caliper-[a-z-]+)(.*)", requirement)
            if sibling:
                assert sibling.group(2) == f"=={caliper.__version__}", (name, requirement)


def test_the_installed_versions_match_the_package_version():
    for name in PUBLISHED:
        assert metadata.version(name) == caliper.__version__, name


def test_the_caliper_console_script_comes_with_caliper_core():
    """Core owns it (a plugin's CI needs no meta package); caliper-eval repeats it for pipx,
    which exposes only the apps of the package it was asked to install."""
    scripts = [e for e in metadata.entry_points(group="console_scripts") if e.name == "caliper"]
    owners = sorted((e.dist.name if e.dist else "", e.value) for e in scripts)
    assert owners == [("caliper-core", "caliper.cli:main"), ("caliper-eval", "caliper.cli:main")]


def test_the_testing_extra_brings_what_caliper_testing_imports():
    requires = metadata.requires("caliper-core") or []
    testing = [r for r in requires if re.search(r"extra\s*==\s*['\"]testing['\"]", r)]
    assert any(r.startswith("pytest") for r in testing), requires
