"""Installs a spec's skills where pi discovers them: the attempt's own agent dir."""

from __future__ import annotations

from pathlib import Path

from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.backend import FolderSkillInstaller
from caliper_backend_pi.home import skills_root


class PiSkillInstaller(FolderSkillInstaller):
    """Copies each skill to ``<agent dir>/skills/<name>/`` with the shared copy rules.

    pi lists every skill found there in its system prompt (name, description and the path of
    SKILL.md) and leaves loading to the model. That folder is global to the agent dir, so it
    needs none of the project-trust approval pi 1.x asks for project skills in headless
    mode, and nothing is preloaded (pi's ``--skill`` flag is never used).
    """

    id = "pi"

    def skills_root(self, sandbox: AttemptSandbox) -> Path:
        return skills_root(sandbox)
