"""A neighbourhood skill after its source (path or git) was resolved to a folder on disk."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.system.skill_tree import SkillTree


@attrs_classes.frozen
class ResolvedSkill:
    """A skill ready to install: its frontmatter name and description and its folder.

    ``source_kind`` is ``"path"`` or ``"git"``; for git sources ``git_repo`` and ``git_sha``
    name the exact commit. ``content_hash`` digests every file of the folder, so saved runs can
    tell whether the skill changed between two runs. ``model_invocable`` is false for a skill
    whose frontmatter says ``disable-model-invocation: true`` (the model can never load it).
    ``tree`` is the folder's scan that ``content_hash`` was taken from (when the run resolved
    it): every attempt copies exactly those files without walking the folder again.
    ``source_root`` is the tree the skill came from (its git checkout, or the local work tree
    or spec folder holding it): links in the skill are followed only while they stay inside
    it (:func:`caliper.system.skill_tree.scan`).
    """

    name: str
    description: str
    source_dir: Path
    source_kind: str = "path"
    declared_as: str = ""
    git_repo: str | None = None
    git_ref: str | None = None
    git_sha: str | None = None
    content_hash: str | None = None
    model_invocable: bool = True
    tree: SkillTree | None = attrs.field(default=None, eq=False, repr=False)
    source_root: Path | None = attrs.field(default=None, eq=False, repr=False)
