"""Installing skills where Claude Code discovers them: ``<HOME>/.claude/skills/<name>/``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from caliper.attempt import AttemptSandbox, InstalledSkill
from caliper.backend import SkillInstaller, copy_skill_tree
from caliper.errors import CaliperError
from caliper.skills import ResolvedSkill


def skills_root(home: Path) -> Path:
    """The user-level skills folder of a (sandbox) HOME."""
    return home / ".claude" / "skills"


class ClaudeSkillInstaller(SkillInstaller):
    """Copies each skill folder under its frontmatter name; nothing goes into the prompt."""

    id = "claude-code"

    def install(
        self, skills: Sequence[ResolvedSkill], sandbox: AttemptSandbox
    ) -> list[InstalledSkill]:
        root = skills_root(sandbox.home)
        root.mkdir(parents=True, exist_ok=True)
        installed = []
        for skill in skills:
            if (
                not skill.name
                or skill.name in (".", "..")
                or "/" in skill.name
                or "\\" in skill.name
            ):
                raise CaliperError(
                    f"Skill {skill.source_dir} has the name {skill.name!r}, which cannot be a "
                    "folder name.",
                    hint="Give it a plain `name:` in its SKILL.md frontmatter.",
                )
            destination = root / skill.name
            copy_skill_tree(skill, destination)
            installed.append(InstalledSkill(skill.name, skill.description, destination))
        return installed
