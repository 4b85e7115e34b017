"""Installing skills where Claude Code discovers them: ``<HOME>/.claude/skills/<name>/``."""

from __future__ import annotations

from pathlib import Path

from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.backend import FolderSkillInstaller


def skills_root(home: Path) -> Path:
    """The user-level skills folder of a (sandbox) HOME."""
    return home / ".claude" / "skills"


class ClaudeSkillInstaller(FolderSkillInstaller):
    """Copies each skill folder under its frontmatter name; nothing goes into the prompt."""

    id = "claude-code"

    def skills_root(self, sandbox: AttemptSandbox) -> Path:
        return skills_root(sandbox.home)
