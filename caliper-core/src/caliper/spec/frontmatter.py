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
from caliper.spec.yamldoc import parse_yaml, read_text

NAME_MAX = 64
DESCRIPTION_MAX = 1024
NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
FENCE = "---"
NO_MODEL_INVOCATION = "disable-model-invocation"


@attrs.frozen
class SkillFrontmatter:
    """The discovery fields of a valid ``SKILL.md``.

    ``model_invocable`` is false when the frontmatter says ``disable-model-invocation: true``.
    """

    name: str
    description: str
    path: Path
    model_invocable: bool = True


@attrs.frozen
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

    def problem(line: int | None, column: int | None, field: str, message: str) -> Problem:
        return Problem(path, line, column, field, message)

    split = split_frontmatter(text)
    if split is None:
        return FrontmatterCheck(
            None,
            [
                problem(
                    1,
                    1,
                    "",
                    "a SKILL.md must open with YAML frontmatter between `---` lines "
                    "holding `name:` and `description:`",
                )
            ],
            [],
        )
    body, first_line = split
    document, yaml_problems = parse_yaml(path, body)
    offset = first_line - 1
    shifted = [
        attrs.evolve(p, line=p.line + offset if p.line is not None else None) for p in yaml_problems
    ]
    if document is None or shifted:
        return FrontmatterCheck(None, shifted, [])
    data = document.data

    def at(key: str, *, key_position: bool = False) -> tuple[int | None, int | None]:
        pos = document.position((key,), key=key_position)
        if pos is None:
            return first_line, 1
        return pos[0] + offset, pos[1]

    if not isinstance(data, dict):
        return FrontmatterCheck(
            None,
            [
                problem(
                    first_line,
                    1,
                    "",
                    "the frontmatter must be a YAML mapping with `name:` and `description:`",
                )
            ],
            [],
        )

    found: list[Problem] = []
    warnings: list[Problem] = []
    name = data.get("name")
    if "name" not in data:
        found.append(
            problem(first_line, 1, "frontmatter.name", "missing; the frontmatter needs `name:`")
        )
    elif not isinstance(name, str):
        found.append(problem(*at("name"), "frontmatter.name", "must be a string"))
    else:
        for message in name_problems(name):
            found.append(problem(*at("name"), "frontmatter.name", f"{name!r} {message}"))
        # The folder the entry sits in, as written (a linked SKILL.md counts where the link
        # is, not where it points); made absolute first so ``./SKILL.md`` has a named parent.
        folder = Path(os.path.abspath(path)).parent.name
        if not found and folder != name:
            warnings.append(
                problem(
                    *at("name"),
                    "frontmatter.name",
                    f"{name!r} differs from the folder name {folder!r}; agents install and list "
                    "the skill under its frontmatter name",
                )
            )

    description = data.get("description")
    if "description" not in data:
        found.append(
            problem(
                first_line,
                1,
                "frontmatter.description",
                "missing; the frontmatter needs `description:` (agents choose skills by it)",
            )
        )
    elif not isinstance(description, str):
        found.append(problem(*at("description"), "frontmatter.description", "must be a string"))
    elif not description.strip():
        found.append(problem(*at("description"), "frontmatter.description", "must not be empty"))
    elif len(description) > DESCRIPTION_MAX:
        found.append(
            problem(
                *at("description"),
                "frontmatter.description",
                f"is {len(description)} characters long; the limit is {DESCRIPTION_MAX}",
            )
        )
    hidden = data.get(NO_MODEL_INVOCATION) is True
    if hidden and isinstance(name, str):
        warnings.append(
            problem(
                *at(NO_MODEL_INVOCATION, key_position=True),
                f"frontmatter.{NO_MODEL_INVOCATION}",
                f"{name!r} is hidden from the model (Claude Code and pi leave it out of the "
                "skill list and refuse to load it), so the agent can never choose it and an "
                "`activates:` naming it can never pass; remove the line to measure the skill",
            )
        )
    if found:
        return FrontmatterCheck(None, found, warnings)
    assert isinstance(name, str) and isinstance(description, str)
    frontmatter = SkillFrontmatter(name, description.strip(), path, model_invocable=not hidden)
    return FrontmatterCheck(frontmatter, [], warnings)
