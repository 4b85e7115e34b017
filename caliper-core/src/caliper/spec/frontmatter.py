"""Read a ``SKILL.md`` and check its frontmatter against the Agent Skills rules.

The rules: the file opens with YAML frontmatter between two ``---`` lines; ``name`` is 1–64
characters of lowercase letters, digits and single hyphens (not at either end) and should
equal the skill's folder name; ``description`` is a non-empty string of at most 1024
characters. Agents discover a skill by exactly these two fields, so a skill without them
cannot be measured. ``disable-model-invocation: true`` (a Claude Code and pi field) hides
the skill from the model, which then can never choose it: allowed, but warned about.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import attrs

from caliper.spec.problems import Problem
from caliper.spec.yamldoc import Document, parse_yaml, read_text
from caliper.system import attrs_classes

NAME_MAX = 64
DESCRIPTION_MAX = 1024
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
FENCE = "---"
NO_MODEL_INVOCATION = "disable-model-invocation"


@attrs_classes.frozen
class SkillFrontmatter:
    """The discovery fields of a valid ``SKILL.md``.

    ``model_invocable`` is false when the frontmatter says ``disable-model-invocation: true``.
    """

    name: str
    description: str
    path: Path
    model_invocable: bool = True


@attrs_classes.frozen
class FrontmatterCheck:
    """Result of reading one ``SKILL.md``: the frontmatter when valid, and what was found."""

    frontmatter: SkillFrontmatter | None
    problems: list[Problem]
    warnings: list[Problem]


def name_problems(name: str) -> list[str]:
    """Every way ``name`` breaks the skill-name rules (empty when it is valid)."""
    found = []
    if not name:
        return ["must not be empty"]
    if len(name) > NAME_MAX:
        found.append(f"is {len(name)} characters long; the limit is {NAME_MAX}")
    if name != name.lower():
        found.append("must be lowercase")
    if re.search(r"[^a-zA-Z0-9-]", name):
        bad = sorted({c for c in name if not (c.isascii() and (c.isalnum() or c == "-"))})
        shown = ", ".join(repr(c) for c in bad)
        found.append(f"may only hold letters a-z, digits and hyphens (found {shown})")
    if name.startswith("-") or name.endswith("-"):
        found.append("must not start or end with a hyphen")
    if "--" in name:
        found.append("must not contain two hyphens in a row")
    return found


def split_frontmatter(text: str) -> tuple[str, int] | None:
    """The frontmatter text and the line number it starts on, or ``None`` if there is none."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != FENCE:
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() == FENCE:
            return "\n".join(lines[1:index]) + "\n", 2
    return None


def check_skill_file(path: Path) -> FrontmatterCheck:
    """Read ``path`` (a ``SKILL.md``) and check its frontmatter; never raises for bad content."""
    text, problems = read_text(path, what="SKILL.md")
    if text is None:
        return FrontmatterCheck(None, problems, [])
    split = split_frontmatter(text)
    if split is None:
        message = (
            "a SKILL.md must open with YAML frontmatter between `---` lines "
            "holding `name:` and `description:`"
        )
        return FrontmatterCheck(None, [Problem(path, 1, 1, "", message)], [])
    body, first_line = split
    document, yaml_problems = parse_yaml(path, body)
    offset = first_line - 1
    shifted = [
        attrs.evolve(p, line=p.line + offset if p.line is not None else None) for p in yaml_problems
    ]
    if document is None or shifted:
        return FrontmatterCheck(None, shifted, [])
    data = document.data
    if not isinstance(data, dict):
        message = "the frontmatter must be a YAML mapping with `name:` and `description:`"
        return FrontmatterCheck(None, [Problem(path, first_line, 1, "", message)], [])
    return _FieldCheck(path, document, first_line).run(data)


class _FieldCheck:
    """Checking the fields of one ``SKILL.md``'s frontmatter mapping, with problems and
    warnings placed at the lines they concern in the file."""

    def __init__(self, path: Path, document: Document, first_line: int) -> None:
        """Check the frontmatter ``document`` of ``path``, which starts on ``first_line``."""
        self.path = path
        self.document = document
        self.first_line = first_line
        self.offset = first_line - 1
        self.found: list[Problem] = []
        self.warnings: list[Problem] = []

    def problem(self, line: int | None, column: int | None, field: str, message: str) -> Problem:
        """A problem (or warning) at ``line``/``column`` of the file about ``field``."""
        return Problem(self.path, line, column, field, message)

    def at(self, key: str, *, key_position: bool = False) -> tuple[int | None, int | None]:
        """The file line and column of ``key``'s value (or of the key itself), else the
        frontmatter's first line."""
        pos = self.document.position((key,), key=key_position)
        if pos is None:
            return self.first_line, 1
        return pos[0] + self.offset, pos[1]

    def run(self, data: dict) -> FrontmatterCheck:
        """Check ``name``, ``description`` and the model-invocation switch of ``data``."""
        name = data.get("name")
        self.check_name(data, name)
        description = data.get("description")
        self.check_description(data, description)
        hidden = data.get(NO_MODEL_INVOCATION) is True
        if hidden and isinstance(name, str):
            self.warnings.append(
                self.problem(
                    *self.at(NO_MODEL_INVOCATION, key_position=True),
                    f"frontmatter.{NO_MODEL_INVOCATION}",
                    f"{name!r} is hidden from the model (Claude Code and pi leave it out of the "
                    "skill list and refuse to load it), so the agent can never choose it and an "
                    "`activates:` naming it can never pass; remove the line to measure the skill",
                )
            )
        if self.found:
            return FrontmatterCheck(None, self.found, self.warnings)
        assert isinstance(name, str) and isinstance(description, str)
        frontmatter = SkillFrontmatter(
            name, description.strip(), self.path, model_invocable=not hidden
        )
        return FrontmatterCheck(frontmatter, [], self.warnings)

    def check_name(self, data: dict, name: object) -> None:
        """Check ``name``: present, a string, valid, and (a warning) equal to the folder's."""
        if "name" not in data:
            self.found.append(
                self.problem(
                    self.first_line, 1, "frontmatter.name", "missing; the frontmatter needs `name:`"
                )
            )
        elif not isinstance(name, str):
            self.found.append(
                self.problem(*self.at("name"), "frontmatter.name", "must be a string")
            )
        else:
            for message in name_problems(name):
                self.found.append(
                    self.problem(*self.at("name"), "frontmatter.name", f"{name!r} {message}")
                )
            # The folder the entry sits in, as written (a linked SKILL.md counts where the link
            # is, not where it points); made absolute first so ``./SKILL.md`` has a named parent.
            folder = Path(os.path.abspath(self.path)).parent.name
            if not self.found and folder != name:
                self.warnings.append(
                    self.problem(
                        *self.at("name"),
                        "frontmatter.name",
                        f"{name!r} differs from the folder name {folder!r}; agents install and "
                        "list the skill under its frontmatter name",
                    )
                )

    def check_description(self, data: dict, description: object) -> None:
        """Check ``description``: present, a string, not empty and not over the limit."""
        field = "frontmatter.description"
        if "description" not in data:
            self.found.append(
                self.problem(
                    self.first_line,
                    1,
                    field,
                    "missing; the frontmatter needs `description:` (agents choose skills by it)",
                )
            )
        elif not isinstance(description, str):
            self.found.append(self.problem(*self.at("description"), field, "must be a string"))
        elif not description.strip():
            self.found.append(self.problem(*self.at("description"), field, "must not be empty"))
        elif len(description) > DESCRIPTION_MAX:
            self.found.append(
                self.problem(
                    *self.at("description"),
                    field,
                    f"is {len(description)} characters long; the limit is {DESCRIPTION_MAX}",
                )
            )
