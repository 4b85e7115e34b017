"""Installing the neighbourhood where Hermes discovers skills: ``$HERMES_HOME/skills``.

Hermes indexes every ``SKILL.md`` below its skills folder and names the folder above a skill
its category, so caliper installs each skill as ``skills/<CATEGORY>/<name>/SKILL.md``. Skills
are never passed with Hermes' ``--skills`` flag: that preloads the whole file into the system
prompt, while the point of an eval is whether the model chooses to load it.
"""

from __future__ import annotations

from pathlib import Path

from caliper.attempt import AttemptSandbox
from caliper.backend import FolderSkillInstaller

CATEGORY = "workspace"
"""The one category every installed skill sits in (Hermes shows it as a heading in its index)."""


def hermes_home(sandbox: AttemptSandbox) -> Path:
    """The attempt's isolated ``HERMES_HOME``."""
    return sandbox.home / ".hermes"


def skills_root(sandbox: AttemptSandbox) -> Path:
    """Where installed skills go for one attempt."""
    return hermes_home(sandbox) / "skills" / CATEGORY


class HermesSkillInstaller(FolderSkillInstaller):
    """Copies each declared skill to ``$HERMES_HOME/skills/<category>/<name>``."""

    id = "hermes"

    def skills_root(self, sandbox: AttemptSandbox) -> Path:
        return skills_root(sandbox)
