"""Installing the neighbourhood where Hermes discovers skills: ``$HERMES_HOME/skills``.

Hermes indexes every ``SKILL.md`` below its skills folder and names the folder above a skill
its category, so caliper installs each skill as ``skills/<CATEGORY>/<name>/SKILL.md``. Skills
are never passed with Hermes' ``--skills`` flag: that preloads the whole file into the system
prompt, while the point of an eval is whether the model chooses to load it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from caliper.attempt import AttemptSandbox, InstalledSkill
from caliper.backend import SkillInstaller, copy_skill_tree

if TYPE_CHECKING:
    from caliper.skills import ResolvedSkill

CATEGORY = "workspace"
"""The one category every installed skill sits in (Hermes shows it as a heading in its index)."""


def hermes_home(sandbox: AttemptSandbox) -> Path:
    """The attempt's isolated ``HERMES_HOME``."""
    return sandbox.home / ".hermes"


def skills_root(sandbox: AttemptSandbox) -> Path:
    """Where installed skills go for one attempt."""
    return hermes_home(sandbox) / "skills" / CATEGORY


class HermesSkillInstaller(SkillInstaller):
    """Copies each declared skill folder into the attempt's Hermes skills category."""

    id = "hermes"

    def install(
        self, skills: Sequence[ResolvedSkill], sandbox: AttemptSandbox
    ) -> list[InstalledSkill]:
        """Copy every skill to ``$HERMES_HOME/skills/<category>/<name>``."""
        root = skills_root(sandbox)
        root.mkdir(parents=True, exist_ok=True)
        installed = []
        for skill in skills:
            destination = root / skill.name
            copy_skill_tree(skill, destination)
            installed.append(InstalledSkill(skill.name, skill.description, destination))
        return installed
