"""Installing skills where Codex discovers them: ``$CODEX_HOME/skills/<name>/``.

``CODEX_HOME`` of an attempt is ``<sandbox home>/.codex``; the skills list Codex shows the model
then names that folder as a skill root. Nothing is mentioned in the prompt.
"""

from __future__ import annotations

from pathlib import Path

from caliper.plugin import nested_skill_files
from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.backend import FolderSkillInstaller


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


def hidden_skill_entries(codex_home_dir: Path) -> list[dict[str, object]]:
    """``skills.config`` entries turning off every nested ``SKILL.md`` of the installed skills."""
    return [
        {"path": str(path), "enabled": False}
        for path in nested_skill_files(codex_home_dir / "skills")
    ]
