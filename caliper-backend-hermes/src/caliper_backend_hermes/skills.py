"""Installing the neighbourhood where Hermes discovers skills: ``$HERMES_HOME/skills``.

Hermes indexes every ``SKILL.md`` below its skills folder and names the folder above a skill
its category, so caliper installs each skill as ``skills/<CATEGORY>/<name>/SKILL.md``. Skills
are never passed with Hermes' ``--skills`` flag: that preloads the whole file into the system
prompt, while the point of an eval is whether the model chooses to load it.

Hermes 0.19 walks its skills folder to any depth and follows links, so a ``SKILL.md`` nested
inside a declared skill's folder would be listed as a skill of its own (only ``references/``,
``templates/``, ``assets/`` and ``scripts/`` right under a skill are skipped). No layout hides
such a file while keeping it at its path, so caliper switches those skills off by name
(``skills.disabled`` in the attempt's config): the files stay readable as the declared
skill's own, but are not listed and ``skill_view`` refuses them. A nested skill sharing its
name with a declared one cannot be switched off this way; it stays listed.
"""

from __future__ import annotations

from pathlib import Path

from caliper.plugin import nested_skill_files, skill_file_name
from caliper.plugin.attempt import AttemptSandbox
from caliper.plugin.backend import FolderSkillInstaller

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


def hidden_skill_names(home: Path) -> list[str]:
    """Names to put in ``skills.disabled``: each nested ``SKILL.md``'s frontmatter and folder
    names, except names a declared (installed) skill uses."""
    root = home / "skills" / CATEGORY
    if not root.is_dir():
        return []
    declared = set()
    for folder in root.iterdir():
        if (folder / "SKILL.md").is_file():
            declared |= {folder.name, skill_file_name(folder / "SKILL.md")}
    hidden: set[str] = set()
    for path in nested_skill_files(root):
        hidden |= {skill_file_name(path), path.parent.name}
    return sorted(hidden - declared)
