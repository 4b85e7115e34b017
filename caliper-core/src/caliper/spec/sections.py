"""Check the top level of a spec and its ``skills:`` and ``sandbox:`` sections."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from caliper.spec.fields import Reporter, type_name
from caliper.spec.model import Sandbox, SkillSource

TOP_KEYS = ("skills", "sandbox", "mcp", "tasks", "user_customizations")
SANDBOX_KEYS = ("extra_path", "forbidden_files")
GIT_KEYS = ("repo", "ref", "path")

ENGINE_HINT = (
    "the engine is not part of a spec: choose it when running, with `caliper run SPEC "
    "--model BACKEND[:MODEL]` (and `--judge-model` for the LLM judge)"
)
TOP_HINTS = {
    "skill": (
        "`skill:` was replaced by `skills:`, a list of skill sources. Write\n"
        "skills:\n  - ./SKILL.md\n"
        "and name skills explicitly in `activates:` (see docs/spec.md)"
    ),
    "judge": ENGINE_HINT,
    "backend": ENGINE_HINT,
    "model": ENGINE_HINT,
    "engine": ENGINE_HINT,
    "judge_model": ENGINE_HINT,
    "baseline": (
        "`baseline:` is not a spec key: the control run is a flag. Run `caliper run SPEC "
        "--baseline` (both arms in one run, ending with the comparison; `--baseline NAME` "
        "chooses what the control arm leaves out; see docs/migration.md)"
    ),
}
TASK_HINTS = {
    "id": "tasks have no id: a task is identified by its `name:` (results and `compare` match "
    "tasks by name), so delete `id:` and keep the names unique",
    "task_id": "tasks have no `task_id:`: a task is identified by its `name:` (results and "
    "`compare` match tasks by name), so delete it and keep the names unique",
    "model": ENGINE_HINT,
    "backend": ENGINE_HINT,
    "judge": ENGINE_HINT,
    "judge_model": ENGINE_HINT,
}
"""Keys of the earlier tool's tasks this format does not take, with what to write instead."""


def check_top(report: Reporter, data: dict[Any, Any]) -> None:
    """Unknown top-level keys, with migration hints for the old singular ``skill:``."""
    report.unknown_keys((), data, TOP_KEYS, what="the spec", extra_hints=TOP_HINTS)


def check_user_customizations(report: Reporter, data: dict[Any, Any]) -> bool | None:
    """``user_customizations:`` must be ``true`` or ``false`` (``None`` when not written)."""
    if "user_customizations" not in data:
        return None
    value = data["user_customizations"]
    if isinstance(value, bool):
        return value
    report.error(
        ("user_customizations",),
        f"expected true or false, found {type_name(value)} (true also loads your own agent "
        "setup into every attempt; see docs/spec.md)",
    )
    return None


def _declared_as(repo: str, ref: str | None, path: str | None) -> str:
    text = repo + (f"@{ref}" if ref else "")
    return text + (f":{path}" if path else "")


def check_skills(report: Reporter, value: Any) -> list[tuple[int, SkillSource]]:
    """Validate ``skills:`` entries (path strings or ``{repo, ref, path}``).

    Returns the valid sources with their index in the list.
    """
    if value is None:
        return []
    if not isinstance(value, list):
        hint = " (write `skills: [./SKILL.md]`)" if isinstance(value, str) else ""
        report.error(
            ("skills",), f"expected a list of skill sources, found {type_name(value)}{hint}"
        )
        return []
    sources: list[tuple[int, SkillSource]] = []
    for index, entry in enumerate(value):
        source = _check_skill_entry(report, index, entry)
        if source is not None:
            sources.append((index, source))
    return sources


def _check_skill_entry(report: Reporter, index: int, entry: Any) -> SkillSource | None:
    """Validate the ``index``-th ``skills:`` entry; its source, or ``None`` when it is wrong
    (each problem reported)."""
    path: tuple[Any, ...] = ("skills", index)
    position = report.document.position(path)
    line = position[0] if position else None
    if isinstance(entry, str):
        if not entry.strip():
            report.error(path, "expected a path to a SKILL.md or its folder, found an empty string")
            return None
        return SkillSource(kind="path", declared_as=entry, path=entry, line=line)
    if not isinstance(entry, dict):
        report.error(
            path,
            f"expected a path (a string) or a git source (repo: …), found {type_name(entry)}",
        )
        return None
    if "repo" not in entry:
        if "path" in entry and isinstance(entry["path"], str):
            report.error(
                path,
                f"a git source needs `repo:`; a local skill is written as a "
                f"plain string: `- {entry['path']}`",
            )
        else:
            report.error(
                path, "a git source needs `repo:` (owner/name, a URL or a path to a repository)"
            )
        report.unknown_keys(path, entry, GIT_KEYS, what="a git source")
        return None
    return _check_git_source(report, path, entry, line)


def _check_git_source(
    report: Reporter, path: tuple[Any, ...], entry: dict, line: int | None
) -> SkillSource | None:
    """Validate a ``{repo, ref, path}`` entry at ``path``; its source, or ``None`` when any
    field is wrong."""
    before = len(report.problems)
    report.unknown_keys(path, entry, GIT_KEYS, what="a git source")
    repo = report.string((*path, "repo"), entry.get("repo"), what="a repository")
    ref = _check_ref(report, path, entry.get("ref"))
    inner = report.string(
        (*path, "path"), entry.get("path"), what="a path inside the repository", required=False
    )
    if inner is not None and (inner.startswith("/") or ".." in Path(inner).parts):
        report.error((*path, "path"), f"{inner!r} must be a relative path inside the repository")
    if len(report.problems) != before or repo is None:
        return None
    return SkillSource(
        kind="git",
        declared_as=_declared_as(repo, ref, inner),
        repo=repo,
        ref=ref,
        path=inner,
        line=line,
    )


def _check_ref(report: Reporter, path: tuple[Any, ...], ref: Any) -> str | None:
    """The git source's ``ref`` (a branch, tag or commit) when it is a usable string, else
    ``None`` (a number YAML read, or a malformed ref, is reported)."""
    if isinstance(ref, (int, float)) and not isinstance(ref, bool):
        report.error(
            (*path, "ref"),
            f"the ref was read as the number {ref}; put it in "
            f'quotes (ref: "{ref}") so YAML keeps it as written',
        )
        return None
    ref = report.string((*path, "ref"), ref, what="a branch, tag or commit", required=False)
    if ref is not None:
        from caliper.spec.gitcache import ref_problem  # only for a git source's ref

        if why := ref_problem(ref):
            report.error((*path, "ref"), f"{ref!r} {why}")
    return ref


def check_sandbox(report: Reporter, value: Any, spec_dir: Path) -> Sandbox:
    """Validate ``sandbox:`` (``extra_path`` folders, ``forbidden_files`` regexes)."""
    if value is None:
        return Sandbox()
    if not isinstance(value, dict):
        report.error(
            ("sandbox",),
            f"expected a mapping (extra_path:, forbidden_files:), found {type_name(value)}",
        )
        return Sandbox()
    report.unknown_keys(("sandbox",), value, SANDBOX_KEYS, what="sandbox")
    extra = (
        report.string_list(("sandbox", "extra_path"), value.get("extra_path"), what="folders") or []
    )
    for index, folder in enumerate(extra):
        target = spec_dir / Path(folder).expanduser()
        if not target.is_dir():
            report.warn(
                ("sandbox", "extra_path", index),
                f"{folder} is not a folder (relative paths start at the spec's folder)",
            )
    patterns = (
        report.string_list(
            ("sandbox", "forbidden_files"), value.get("forbidden_files"), what="regular expressions"
        )
        or []
    )
    for index, pattern in enumerate(patterns):
        try:
            re.compile(pattern)
        except re.error as exc:
            report.error(
                ("sandbox", "forbidden_files", index),
                f"{pattern!r} is not a valid regular expression: {exc}",
            )
    return Sandbox(extra_path=tuple(extra), forbidden_files=tuple(patterns))
