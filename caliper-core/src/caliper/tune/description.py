"""A ``SKILL.md`` description: read it, check a candidate, and rewrite it in place.

Rewriting touches only the ``description:`` value in the frontmatter; every other byte of
the file (a byte-order mark, other keys, comments, the body, line endings) is kept as it was.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from caliper.spec.frontmatter import DESCRIPTION_MAX, check_skill_file
from caliper.spec.problems import SpecInvalid

_XML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9_.:-]*(\s[^<>]*)?/?>")
_FENCE = re.compile(r"^---[ \t]*\r?$")


def description_problems(text: str) -> list[str]:
    """Why ``text`` cannot be a skill description (agentskills limits); empty when it can.

    A description must be non-empty, at most 1024 characters, hold no XML tags (``<tag>``)
    and fit on one line of plain text (no line breaks), so it round-trips through YAML.
    """
    found = []
    if not text.strip():
        found.append("is empty")
    if len(text) > DESCRIPTION_MAX:
        found.append(f"is {len(text)} characters long; the limit is {DESCRIPTION_MAX}")
    if _XML_TAG.search(text):
        found.append("holds an XML tag, which the Agent Skills format does not allow")
    if "\n" in text or "\r" in text:
        found.append("spans several lines")
    return found


class FrontmatterEditError(ValueError):
    """The description line of a ``SKILL.md`` could not be located for rewriting."""


def _frontmatter_lines(lines: list[str]) -> tuple[int, int]:
    if not lines or not _FENCE.match(lines[0].rstrip("\n")):
        raise FrontmatterEditError("the file does not open with `---` frontmatter")
    for index in range(1, len(lines)):
        if _FENCE.match(lines[index].rstrip("\n")):
            return 1, index
    raise FrontmatterEditError("the frontmatter's closing `---` is missing")


def _is_top_key(line: str) -> bool:
    """A line that starts a new top-level key, a comment at column 0, or a document marker."""
    return line.startswith("#") or bool(re.match(r"^[A-Za-z0-9_\"'-][^:#]*:", line))


def replace_description(text: str, new: str) -> str:
    """``text`` (a whole ``SKILL.md``) with the frontmatter ``description`` set to ``new``.

    The old value (plain, quoted, folded or literal block, over any number of lines) is
    replaced by one double-quoted line (JSON string syntax, valid YAML), written with the
    file's own line ending; everything else is kept byte for byte, a leading UTF-8
    byte-order mark included.
    """
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    lines = text[len(bom) :].splitlines(keepends=True)
    first, end = _frontmatter_lines(lines)
    start = next((i for i in range(first, end) if re.match(r"^description[ \t]*:", lines[i])), None)
    if start is None:
        raise FrontmatterEditError("the frontmatter has no top-level `description:` line")
    stop = start + 1
    while stop < end and not _is_top_key(lines[stop]):
        stop += 1
    # Keep trailing blank or comment lines that belong after the value.
    while stop - 1 > start and not lines[stop - 1].strip():
        stop -= 1
    ending = "\r\n" if lines[start].endswith("\r\n") else "\n"
    rendered = f"description: {json.dumps(new, ensure_ascii=False)}{ending}"
    return bom + "".join([*lines[:start], rendered, *lines[stop:]])


def read_description(skill_file: Path) -> str:
    """The description as the spec loader reads it (raises ``SpecInvalid`` when invalid)."""
    checked = check_skill_file(skill_file)
    if checked.frontmatter is None:
        raise SpecInvalid(checked.problems, hint="Fix the SKILL.md frontmatter first.")
    return checked.frontmatter.description
