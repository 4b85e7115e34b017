"""Installing skills where Gemini CLI discovers them: ``~/.gemini/skills/<name>/``.

``~`` of an attempt is the sandbox home (``GEMINI_CLI_HOME``), so the skills are user-scope
skills of that home. The model loads one with the ``activate_skill`` tool.
"""

from __future__ import annotations

from pathlib import Path

from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.backend import FolderSkillInstaller


def gemini_dir(sandbox: AttemptSandbox) -> Path:
    """The attempt's private ``~/.gemini`` folder."""
    return sandbox.home / ".gemini"


def skills_root(sandbox: AttemptSandbox) -> Path:
    """The user-scope skills folder Gemini CLI reads inside the attempt's home."""
    return gemini_dir(sandbox) / "skills"


class GeminiSkillInstaller(FolderSkillInstaller):
    """Copies each skill folder under its frontmatter name."""

    id = "gemini"

    def skills_root(self, sandbox: AttemptSandbox) -> Path:
        return skills_root(sandbox)
