"""SKILL.md frontmatter rules (Agent Skills): name and description, reported by line."""

from __future__ import annotations

from pathlib import Path

import pytest

from caliper.spec.frontmatter import check_skill_file, name_problems


@pytest.mark.parametrize("name", ["a", "pdf", "commit-writer", "v2-tools", "x" * 64])
def test_valid_names(name: str) -> None:
    assert name_problems(name) == []


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("", "must not be empty"),
        ("x" * 65, "65 characters long; the limit is 64"),
        ("Commit", "must be lowercase"),
        ("commit_writer", "found '_'"),
        ("commit writer", "found ' '"),
        ("-commit", "must not start or end with a hyphen"),
        ("commit-", "must not start or end with a hyphen"),
        ("commit--writer", "two hyphens in a row"),
        ("café", "found 'é'"),
    ],
)
def test_invalid_names(name: str, fragment: str) -> None:
    assert any(fragment in message for message in name_problems(name))


def skill(tmp_path: Path, text: str, folder: str = "my-skill") -> Path:
    path = tmp_path / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_valid_frontmatter(tmp_path: Path) -> None:
    result = check_skill_file(skill(tmp_path, "---\nname: my-skill\ndescription: Does x.\n---\n"))
    assert result.problems == [] and result.warnings == []
    assert (result.frontmatter.name, result.frontmatter.description) == ("my-skill", "Does x.")


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("# no frontmatter\n", 1, "must open with YAML frontmatter"),
        ("---\nname: my-skill\ndescription: never closed\n", 1, "must open with YAML"),
        ("---\ndescription: d\n---\n", 2, "missing; the frontmatter needs `name:`"),
        ("---\nname: my-skill\n---\n", 2, "needs `description:`"),
        ("---\nname: my-skill\ndescription: ''\n---\n", 3, "must not be empty"),
        ("---\nname: my-skill\ndescription: [a]\n---\n", 3, "must be a string"),
        ("---\nname: 42\ndescription: d\n---\n", 2, "must be a string"),
        ("---\n- a\n---\n", 2, "must be a YAML mapping"),
        ("---\nname: my-skill\ndescription: use when: x\n---\n", 3, "invalid YAML"),
        ("---\nname: a\nname: b\ndescription: d\n---\n", 3, "duplicate key 'name'"),
        (f"---\nname: my-skill\ndescription: {'d' * 1025}\n---\n", 3, "the limit is 1024"),
    ],
)
def test_frontmatter_problems(tmp_path: Path, text: str, line: int, fragment: str) -> None:
    path = skill(tmp_path, text)
    result = check_skill_file(path)
    assert result.frontmatter is None
    assert any(fragment in p.message for p in result.problems), result.problems
    assert result.problems[0].file == path
    assert result.problems[0].line == line


def test_folder_name_mismatch_is_a_warning(tmp_path: Path) -> None:
    result = check_skill_file(skill(tmp_path, "---\nname: other\ndescription: d\n---\n"))
    assert result.frontmatter is not None
    (warning,) = result.warnings
    assert (warning.line, warning.column) == (2, 7)
    assert "differs from the folder name 'my-skill'" in warning.message


def test_missing_and_binary_skill_files(tmp_path: Path) -> None:
    assert "no such file" in check_skill_file(tmp_path / "SKILL.md").problems[0].message
    path = tmp_path / "SKILL.md"
    path.write_bytes(b"---\x00\x00")
    assert "binary" in check_skill_file(path).problems[0].message
