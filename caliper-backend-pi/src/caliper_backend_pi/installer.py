"""Installs a spec's skills where pi discovers them: the attempt's own agent dir."""

from __future__ import annotations

from collections.abc import Sequence

from caliper.attempt import AttemptSandbox, InstalledSkill
from caliper.backend import SkillInstaller, copy_skill_tree
from caliper.skills import ResolvedSkill
from caliper_backend_pi.agentdir import skills_root


class PiSkillInstaller(SkillInstaller):
    """Copies each skill to ``<agent dir>/skills/<name>/``.

    pi lists every skill found there in its system prompt (name, description and the path of
    SKILL.md) and leaves loading to the model. That folder is global to the agent dir, so it
    needs none of the project-trust approval pi 1.x asks for project skills in headless
    mode, and nothing is preloaded (pi's ``--skill`` flag is never used).
    """

    id = "pi"

    def install(
        self, skills: Sequence[ResolvedSkill], sandbox: AttemptSandbox
    ) -> list[InstalledSkill]:
        root = skills_root(sandbox)
        root.mkdir(parents=True, exist_ok=True)
        installed = []
        for skill in skills:
            destination = root / skill.name
            copy_skill_tree(skill, destination)
            installed.append(
                InstalledSkill(
                    name=skill.name, description=skill.description, skill_dir=destination
                )
            )
        return installed
