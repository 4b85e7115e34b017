"""Installing skills where Codex discovers them: ``$CODEX_HOME/skills/<name>/``.

``CODEX_HOME`` of an attempt is ``<sandbox home>/.codex``; the skills list Codex shows the model
then names that folder as a skill root. Nothing is mentioned in the prompt.
"""

from __future__ import annotations

from pathlib import Path

from caliper.attempt import AttemptSandbox
from caliper.backend import FolderSkillInstaller


def codex_home(sandbox: AttemptSandbox) -> Path:
    """The attempt's private ``CODEX_HOME``."""
    return sandbox.home / ".codex"


def skills_root(sandbox: AttemptSandbox) -> Path:
    """The user-scope skills folder Codex reads inside the attempt's ``CODEX_HOME``."""
    return codex_home(sandbox) / "skills"


class CodexSkillInstaller(FolderSkillInstaller):
    """Copies each skill folder under its frontmatter name."""

    id = "codex"

    def skills_root(self, sandbox: AttemptSandbox) -> Path:
        return skills_root(sandbox)
