"""A declared skill whose folder holds further ``SKILL.md`` files, for backend tests.

Agents that scan recursively (Codex, Hermes) can list such nested files as skills of their
own. :func:`write_nested_skill` writes the layout and
:func:`assert_only_declared_listed` checks what the agent sent the model.
"""

from __future__ import annotations

from caliper.testing.conformance_kit import ConformanceKit, skill_description

PARENT = "parent-skill"
NESTED = ("nested-one", "nested-two")
NESTED_MARKER = "NESTED-BODY-{name}"


def write_nested_skill(kit: ConformanceKit) -> str:
    """``skills/parent-skill`` with ``sub/SKILL.md`` and ``deep/er/SKILL.md``; the spec entry."""
    entry = kit.skill(PARENT)
    folder = kit.project / "skills" / PARENT
    for name, where in zip(NESTED, ("sub", "deep/er"), strict=True):
        nested = folder / where
        nested.mkdir(parents=True)
        (nested / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {skill_description(name)}\n---\n"
            f"{NESTED_MARKER.format(name=name)}\n",
            encoding="utf-8",
        )
    return entry


def assert_only_declared_listed(first_request_text: str) -> None:
    """The declared skill is advertised; the nested ones are not."""
    assert skill_description(PARENT)[:50] in first_request_text
    for name in NESTED:
        assert skill_description(name)[:40] not in first_request_text, name
