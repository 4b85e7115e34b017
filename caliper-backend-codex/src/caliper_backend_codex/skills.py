"""Installing skills where Codex discovers them: ``$CODEX_HOME/skills/<name>/``.

``CODEX_HOME`` of an attempt is ``<sandbox home>/.codex``; the skills list Codex shows the model
then names that folder as a skill root. Nothing is mentioned in the prompt.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from caliper.attempt import AttemptSandbox, InstalledSkill
from caliper.backend import SkillInstaller, copy_skill_tree
from caliper.errors import CaliperError
from caliper.skills import ResolvedSkill


def codex_home(sandbox: AttemptSandbox) -> Path:
    """The attempt's private ``CODEX_HOME``."""
    return sandbox.home / ".codex"


def skills_root(sandbox: AttemptSandbox) -> Path:
    """The user-scope skills folder Codex reads inside the attempt's ``CODEX_HOME``."""
    return codex_home(sandbox) / "skills"


def _check_name(skill: ResolvedSkill) -> None:
    name = skill.name
    if not name or name in (".", "..") or "/" in name or "\\" in name or name.startswith("."):
        raise CaliperError(
            f"Skill {skill.source_dir} has the name {name!r}, which cannot be a folder name.",
            hint="Give it a plain `name:` in its SKILL.md frontmatter.",
        )


class CodexSkillInstaller(SkillInstaller):
    """Copies each skill folder under its frontmatter name."""

    id = "codex"

    def install(
        self, skills: Sequence[ResolvedSkill], sandbox: AttemptSandbox
    ) -> list[InstalledSkill]:
        root = skills_root(sandbox)
        root.mkdir(parents=True, exist_ok=True)
        installed = []
        for skill in skills:
            _check_name(skill)
            destination = root / skill.name
            copy_skill_tree(skill, destination)
            installed.append(InstalledSkill(skill.name, skill.description, destination))
        return installed
