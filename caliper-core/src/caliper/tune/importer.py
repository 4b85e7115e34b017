"""Convert Anthropic skill-creator eval files into a caliper spec.

Two skill-creator formats are read (see ``docs/tuning.md`` for the field-by-field table and
where each format is defined upstream):

* ``evals/evals.json``: ``{"skill_name", "evals": [{"id", "prompt", "expected_output",
  "files", "expectations"}]}``, with ``files`` relative to the skill's root;
* a trigger-eval set: ``[{"query": ..., "should_trigger": ...}]``.

Each eval becomes a task (``expectations`` and ``expected_output`` → ``expect:``; ``files``
→ a ``setup:`` that copies them into the attempt's folder, named relative to the spec under
``$CALIPER_SPEC_DIR``; ``activates: [skill]``), each
trigger query an activation-only task. What has no caliper equivalent is listed in
:attr:`Conversion.not_carried`, so the command can say so.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import Any

import attrs
import yaml

from caliper.spec.frontmatter import check_skill_file
from caliper.spec.problems import Problem, SpecInvalid
from caliper.spec.yamldoc import load_document
from caliper.system import attrs_classes
from caliper.tune.probes import TRIGGER_EVAL_KEYS

EVAL_KEYS = ("id", "prompt", "expected_output", "files", "expectations")
EVALS_FILE_KEYS = ("skill_name", "evals")


@attrs_classes.define
class Conversion:
    """What an import produced: spec tasks, and every thing that could not be carried over."""

    skill_dir: Path | None = None
    skill_name: str | None = None
    tasks: list[dict[str, Any]] = attrs.field(factory=list)
    not_carried: list[str] = attrs.field(factory=list)
    sources: list[Path] = attrs.field(factory=list)
    warnings: list[str] = attrs.field(factory=list)


@attrs_classes.frozen
class FileCopies:
    """A task's ``setup:`` to be: copy these files (absolute paths) into the attempt's folder.
    :func:`render_spec` writes it with paths relative to the spec."""

    paths: tuple[Path, ...]

    def command(self, spec_dir: Path) -> str:
        """The shell command, each path relative to ``spec_dir`` under ``$CALIPER_SPEC_DIR``
        (the spec's folder, set for ``setup:``), so the spec works wherever it is checked out."""
        commands = []
        for path in self.paths:
            flag = "-R " if path.is_dir() else ""
            relative = Path(os.path.relpath(path, spec_dir)).as_posix()
            commands.append(f'cp {flag}"$CALIPER_SPEC_DIR"/{shlex.quote(relative)} .')
        return " && ".join(commands)


class ImportInvalid(SpecInvalid):
    """An input file is not a skill-creator file caliper can read (exit 2)."""

    def __init__(self, problems: list[Problem]):
        super().__init__(
            problems,
            hint="The skill-creator formats caliper reads are in docs/tuning.md "
            "('Importing from skill-creator').",
        )


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line strings as ``|`` blocks, so ``expect:`` stays readable."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str)


def _bad(path: Path, message: str) -> ImportInvalid:
    return ImportInvalid([Problem(path, None, None, "", message)])


def _load_json(path: Path) -> Any:
    document, problems = load_document(path, what="skill-creator eval file")
    if document is None or problems:
        raise ImportInvalid(problems)
    return document


def find_skill_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding a ``SKILL.md``."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / "SKILL.md").is_file():
            return folder
    return None


def _task_name(prefix: str, index: int, text: str, seen: set[str]) -> str:
    words = " ".join(text.split())
    short = words if len(words) <= 50 else words[:47].rstrip() + "..."
    name = f"{prefix} {index}: {short}"
    n = 1
    base = name
    while name in seen:
        n += 1
        name = f"{base} ({n})"
    seen.add(name)
    return name


def _expect_text(expected_output: Any, expectations: list[str]) -> str | None:
    parts = []
    if isinstance(expected_output, str) and expected_output.strip():
        parts.append(expected_output.strip())
    if expectations:
        lead = "In particular, all of these hold:" if parts else "All of these hold:"
        parts.append(lead + "\n" + "\n".join(f"- {e}" for e in expectations))
    return "\n".join(parts) if parts else None


def _setup_for(
    files: list[str], skill_root: Path, where: str, conversion: Conversion
) -> FileCopies | None:
    paths = []
    for entry in files:
        source = (skill_root / entry).resolve()
        if not source.exists():
            conversion.not_carried.append(
                f"{where}: file {entry!r} does not exist under {skill_root}"
            )
            continue
        paths.append(source)
    return FileCopies(tuple(paths)) if paths else None


def convert_evals(path: Path, data: Any, conversion: Conversion, seen: set[str]) -> None:
    """Add the tasks of a skill-creator ``evals.json`` (already parsed) to ``conversion``."""
    if not isinstance(data, dict) or not isinstance(data.get("evals"), list):
        raise _bad(
            path, 'expected skill-creator\'s evals.json: {"skill_name": ..., "evals": [...]}'
        )
    for key in data:
        if key not in EVALS_FILE_KEYS:
            conversion.not_carried.append(
                f"{path}: top-level field {key!r} (no caliper equivalent)"
            )
    skill_root = conversion.skill_dir or find_skill_root(path.parent)
    name = data.get("skill_name")
    if isinstance(name, str) and conversion.skill_name and name != conversion.skill_name:
        conversion.not_carried.append(
            f"{path}: skill_name {name!r} differs from the skill's frontmatter name "
            f"{conversion.skill_name!r}; the frontmatter name is used"
        )
    for index, item in enumerate(data["evals"]):
        where = f"{path}: evals[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("prompt"), str):
            conversion.not_carried.append(f"{where}: skipped, it has no string `prompt`")
            continue
        for key in item:
            if key not in EVAL_KEYS:
                conversion.not_carried.append(f"{where}: field {key!r} (no caliper equivalent)")
        expectations = [e for e in item.get("expectations") or [] if isinstance(e, str)]
        if len(expectations) != len(item.get("expectations") or []):
            conversion.not_carried.append(f"{where}: expectations that are not strings")
        label = item.get("id", index + 1)
        task: dict[str, Any] = {"name": _task_name("eval", label, item["prompt"], seen)}
        files = [f for f in item.get("files") or [] if isinstance(f, str)]
        if files and skill_root is None:
            conversion.not_carried.append(f"{where}: files (no skill folder to find them in)")
        elif files:
            setup = _setup_for(files, skill_root, where, conversion)
            if setup:
                task["setup"] = setup
        task["prompt"] = item["prompt"]
        expect = _expect_text(item.get("expected_output"), expectations)
        if expect:
            task["expect"] = expect
        if conversion.skill_name:
            task["activates"] = [conversion.skill_name]
        if "expect" not in task:
            if "activates" not in task:
                conversion.not_carried.append(f"{where}: skipped, it has nothing to check")
                continue
            conversion.not_carried.append(
                f"{where}: no expectations or expected_output, so only its activation is checked"
            )
        conversion.tasks.append(task)


def convert_triggers(path: Path, data: Any, conversion: Conversion, seen: set[str]) -> None:
    """Add the activation-only tasks of a trigger-eval list to ``conversion``."""
    if conversion.skill_name is None:
        raise _bad(path, "a trigger-eval file needs the skill it is for: pass --skill DIR")
    for index, item in enumerate(data):
        where = f"{path}: [{index}]"
        if (
            not isinstance(item, dict)
            or not isinstance(item.get("query"), str)
            or not isinstance(item.get("should_trigger"), bool)
        ):
            conversion.not_carried.append(
                f"{where}: skipped, it needs a string `query` and a true/false `should_trigger`"
            )
            continue
        for key in item:
            if key not in TRIGGER_EVAL_KEYS:
                conversion.not_carried.append(f"{where}: field {key!r} (no caliper equivalent)")
        kind = "should trigger" if item["should_trigger"] else "should not trigger"
        conversion.tasks.append(
            {
                "name": _task_name(kind, index + 1, item["query"], seen),
                "prompt": item["query"],
                "activates": [conversion.skill_name] if item["should_trigger"] else [],
            }
        )


def convert(paths: list[Path], skill: Path | None) -> Conversion:
    """Read every input (a skill folder, an ``evals.json`` or a trigger-eval file)."""
    conversion = Conversion()
    inputs: list[Path] = []
    named: dict[Path, str] = {}
    for path in paths:
        if path.is_dir():
            evals = path / "evals" / "evals.json"
            if not evals.is_file():
                raise _bad(path, "is a folder without evals/evals.json; name the eval file itself")
            given, how = evals, f"{path} (its evals/evals.json)"
        else:
            given, how = path, str(path)
        key = given.resolve()
        if key in named:
            conversion.warnings.append(
                f"{how} is the same file as {named[key]}: its evals were imported once"
            )
            continue
        named[key] = how
        inputs.append(given)
    root = skill.resolve() if skill else None
    if root is not None and root.name == "SKILL.md":
        root = root.parent
    if root is None:
        for path in inputs:
            root = find_skill_root(path.parent)
            if root is not None:
                break
    if root is not None:
        checked = check_skill_file(root / "SKILL.md")
        if checked.frontmatter is None:
            raise SpecInvalid(checked.problems, hint="Fix the skill's SKILL.md first.")
        conversion.skill_dir = root
        conversion.skill_name = checked.frontmatter.name
    seen: set[str] = set()
    for path in inputs:
        document = _load_json(path)
        data = document.data
        conversion.sources.append(path)
        if isinstance(data, list):
            convert_triggers(path, data, conversion, seen)
        else:
            convert_evals(path, data, conversion, seen)
    if not conversion.tasks:
        raise _bad(inputs[0], "no eval or trigger query could be converted")
    return conversion


def render_spec(conversion: Conversion, output: Path) -> str:
    """The ``.eval.yaml`` text, the skill path written relative to ``output``'s folder."""
    data: dict[str, Any] = {}
    if conversion.skill_dir is not None:
        relative = os.path.relpath(conversion.skill_dir, output.resolve().parent)
        data["skills"] = [relative if relative.startswith(".") else f"./{relative}"]
    spec_dir = output.resolve().parent
    data["tasks"] = [
        {
            key: value.command(spec_dir) if isinstance(value, FileCopies) else value
            for key, value in task.items()
        }
        for task in conversion.tasks
    ]
    sources = ", ".join(
        Path(os.path.relpath(p.resolve(), spec_dir)).as_posix() for p in conversion.sources
    )
    header = f"# Imported by `caliper import skill-creator` from {sources}\n"
    body = yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=100)
    return header + body


def dumps(value: Any) -> str:
    """JSON for messages."""
    return json.dumps(value, ensure_ascii=False)
