"""A spec's short name, from its file name (light: ``caliper list`` needs only this)."""

from __future__ import annotations

from pathlib import Path


def spec_name_for(path: Path) -> str:
    """The spec's short name: ``foo.eval.yaml`` → ``foo``."""
    name = path.name
    for suffix in (".eval.yaml", ".eval.yml", ".yaml", ".yml"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return path.stem
