"""Activation read from file reads, for agents without a skill tool (Codex, pi).

Such an agent lists each installed skill's ``SKILL.md`` path to the model, which loads a skill
by reading that file. The backend finds which files the agent's successful tool calls read
(that part is about its agent: its tool names, its shell) and hands the absolute paths here;
a skill is activated when exactly its installed ``SKILL.md`` was read. Paths are compared
after resolving ``..`` and symbolic links, so a prefix (``skills/foo-extra/SKILL.md`` for
``foo``) or another file of the skill never counts.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from caliper.plugin.attempt import InstalledSkill
from caliper.system.skill_tree import skill_file_name


def activated_by_reads(reads: Iterable[str], skills: Sequence[InstalledSkill]) -> list[str]:
    """Installed skills whose ``SKILL.md`` is among ``reads`` (absolute paths), in first-read
    order."""
    targets = {os.path.realpath(skill.skill_file): skill.name for skill in skills}
    order: list[str] = []
    for path in reads:
        name = targets.get(os.path.realpath(path))
        if name and name not in order:
            order.append(name)
    return order


def undeclared_reads(
    reads: Iterable[str], skills: Sequence[InstalledSkill], skills_root: str | os.PathLike[str]
) -> list[str]:
    """``SKILL.md`` files under ``skills_root`` that were read but belong to no declared skill
    (e.g. one nested inside a declared skill's folder), by frontmatter name (the folder name
    when it has none), in first-read order."""
    declared = {os.path.realpath(skill.skill_file) for skill in skills}
    root = os.path.realpath(skills_root)
    found: list[str] = []
    for path in reads:
        real = os.path.realpath(path)
        if os.path.basename(real) != "SKILL.md" or real in declared:
            continue
        if not real.startswith(root + os.sep) or not os.path.isfile(real):
            continue
        name = skill_file_name(real)
        if name not in found:
            found.append(name)
    return found
