"""Fill ``{{skill_path:NAME}}``, ``{{skill_dir:NAME}}`` and ``{{workdir}}`` from the request.

The scripted model only knows what a real model would know: the text it was sent. Paths are
looked up there, so a script can read a skill "the way the agent advertised it".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_PLACEHOLDER = re.compile(r"\{\{\s*(skill_path|skill_dir|workdir)\s*(?::\s*([^}\s]+)\s*)?\}\}")
_CODEX_ROOT = re.compile(r"`(r\d+)`\s*=\s*`([^`]+)`")
_WORKDIR = (
    re.compile(r"<cwd>\s*([^<\s]+)\s*</cwd>"),
    re.compile(r"Primary working directory:\s*(/\S+)"),
    re.compile(r"[Cc]urrent working directory:\s*(/\S+)"),
    re.compile(r"[Ww]orking directory:\s*(/\S+)"),
)


def skill_path(name: str, text: str) -> str | None:
    """The SKILL.md path of skill ``name`` as advertised in ``text``, if any."""
    absolute = re.search(r"(/[^\s`'\"<>()\[\]]*/" + re.escape(name) + r"/SKILL\.md)", text)
    if absolute:
        return absolute.group(1)
    roots = dict(_CODEX_ROOT.findall(text))
    rel = re.search(r"\(file:\s*(r\d+)/((?:[^)\s]*/)?" + re.escape(name) + r"/SKILL\.md)\)", text)
    if rel and rel.group(1) in roots:
        return f"{roots[rel.group(1)].rstrip('/')}/{rel.group(2)}"
    return None


def workdir(text: str) -> str | None:
    """The agent's working directory as stated in its prompt, if it states one."""
    for pattern in _WORKDIR:
        found = pattern.search(text)
        if found:
            return found.group(1).rstrip(".,;")
    return None


def fill_text(value: str, text: str, unresolved: list[str]) -> str:
    """Replace placeholders in ``value``; names that cannot be resolved go to ``unresolved``."""

    def repl(m: re.Match[str]) -> str:
        kind, name = m.group(1), m.group(2)
        found: str | None
        if kind == "workdir":
            found = workdir(text)
        elif not name:
            found = None
        else:
            found = skill_path(name, text)
            if found and kind == "skill_dir":
                found = found.rsplit("/", 1)[0]
        if found is None:
            unresolved.append(m.group(0))
            return m.group(0)
        return found

    return _PLACEHOLDER.sub(repl, value)


def fill(value: Any, text: str, unresolved: list[str]) -> Any:
    """``fill_text`` applied to every string inside ``value`` (mappings and lists too)."""
    if isinstance(value, str):
        return fill_text(value, text, unresolved)
    if isinstance(value, Mapping):
        return {k: fill(v, text, unresolved) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [fill(v, text, unresolved) for v in value]
    return value
