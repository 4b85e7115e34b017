"""Convert a spec written for the earlier tool (PyPI's ``caliper-eval`` up to 0.21) and the
history files it names into this format (``caliper migrate``, see ``docs/migration.md``).

Nothing here writes a file: :func:`plan_migration` reads a spec and returns, for each file
that needs to change, its current text and the migrated text, plus what could not be carried
over automatically. The spec is edited as text (the keys this format does not take are
removed, ``skill:`` becomes ``skills:``), so its comments and layout stay; a history file in
the earlier format (a bare list of turns) is written anew in the ``turns:`` format.

An earlier history's user turn opening with ``/NAME`` (NAME a skill the spec declares) was
expanded by the earlier tool into that skill's instructions when the attempt started. This
format has no such turn, so the migration writes the expansion into the history: a user turn
holding the skill's instructions as its ``SKILL.md`` reads now, and what was typed after the
command.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import attrs
import yaml

from caliper.spec.conversation import check_document
from caliper.spec.fields import Reporter
from caliper.spec.frontmatter import check_skill_file, split_frontmatter
from caliper.spec.sections import TASK_HINTS, TOP_HINTS
from caliper.spec.yamldoc import parse_yaml
from caliper.system import attrs_classes

SLASH_COMMAND = re.compile(r"/([A-Za-z0-9_.-]+)(?:\s+(.*))?", re.DOTALL)
"""A user turn that is a slash command: ``/NAME`` and what was typed after it."""

OLD_TURN_KEYS = ("user", "assistant", "shell")
OLD_SHELL_KEYS = ("run", "output")


@attrs_classes.frozen
class FileChange:
    """One file the migration rewrites: its path, current text, migrated text and why."""

    path: Path
    old: str
    new: str
    why: tuple[str, ...]


@attrs_classes.define
class MigrationPlan:
    """What migrating one spec means: the files to rewrite and what is left to do by hand."""

    spec: Path
    changes: list[FileChange] = attrs.field(factory=list)
    manual: list[str] = attrs.field(factory=list)
    notes: list[str] = attrs.field(factory=list)


class NotASpec(ValueError):
    """The file cannot be read as a spec at all (not UTF-8, not YAML, not a mapping)."""


def plan_migration(spec_path: Path, *, seen_histories: set[Path] | None = None) -> MigrationPlan:
    """What migrating the spec at ``spec_path`` would change (nothing is written).

    ``seen_histories`` collects the history files already planned (by this or an earlier spec
    of the same command), so a file several specs share is converted once.
    """
    plan = MigrationPlan(spec_path)
    text = _read(spec_path)
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise NotASpec(f"{spec_path} is not valid YAML: {_first_line(exc)}") from None
    if not isinstance(root, yaml.MappingNode) or not isinstance(data, dict):
        raise NotASpec(f"{spec_path} is not a spec: expected a mapping with `tasks:`")
    new_text = _migrate_spec_text(spec_path, text, root, data, plan)
    if new_text is not None and new_text != text:
        plan.changes.append(FileChange(spec_path, text, new_text, tuple(plan.notes)))
    skills = _declared_skills(spec_path.parent, data, plan)
    seen = seen_histories if seen_histories is not None else set()
    tasks = data.get("tasks")
    for index, task in enumerate(tasks if isinstance(tasks, list) else []):
        declared = task.get("history") if isinstance(task, dict) else None
        if not isinstance(declared, str) or not declared.strip():
            continue
        path = Path(os.path.normpath(spec_path.parent / Path(declared.strip()).expanduser()))
        if path in seen:
            continue
        seen.add(path)
        change = _migrate_history(path, skills, f"tasks[{index}].history", plan)
        if change is not None:
            plan.changes.append(change)
    return plan


def _read(path: Path) -> str:
    try:
        with open(path, encoding="utf-8", newline="") as handle:  # keep the line endings
            return handle.read()
    except FileNotFoundError:
        raise NotASpec(f"{path}: no such file") from None
    except IsADirectoryError:
        raise NotASpec(f"{path} is a folder, not a spec") from None
    except UnicodeDecodeError:
        raise NotASpec(f"{path} is not UTF-8 text") from None
    except OSError as exc:
        raise NotASpec(f"cannot read {path}: {exc.strerror or exc}") from None


def _first_line(exc: Exception) -> str:
    return " ".join(str(exc).split())


# --- the spec ------------------------------------------------------------------------------


@attrs_classes.frozen
class _Edit:
    start: int
    end: int
    text: str


def _migrate_spec_text(
    path: Path, text: str, root: yaml.MappingNode, data: dict[Any, Any], plan: MigrationPlan
) -> str | None:
    """The spec's text with the earlier tool's keys removed or rewritten; ``None`` when an edit
    could not be made safely (then it is listed in ``plan.manual``)."""
    edits: list[_Edit] = []
    first_note = len(plan.notes)

    def give_up(message: str) -> None:
        del plan.notes[first_note:]  # nothing was done: the message lists what to do
        plan.manual.append(message)

    expected = dict(data)
    pairs = root.value
    for position, (key, value) in enumerate(pairs):
        name = key.value if isinstance(key, yaml.ScalarNode) else None
        following = pairs[position + 1][0] if position + 1 < len(pairs) else None
        if name == "skill":
            if "skills" in data:
                give_up(
                    f"{path}: both `skill:` and `skills:`; move the `skill:` path into "
                    "`skills:` and delete `skill:`"
                )
                return None
            skill = data.get("skill")
            declared = skill.get("path") if isinstance(skill, dict) else skill
            declared = declared if isinstance(declared, str) and declared else "./SKILL.md"
            replacement = "skills:\n  - " + _plain(declared) + "\n"
            edits.append(_remove(text, key, value, following, replacement))
            expected.pop("skill")
            expected["skills"] = [declared]
            plan.notes.append(f"`skill:` became `skills: [{declared}]`")
            if isinstance(skill, dict) and ({"backend", "model"} & set(skill)):
                plan.notes.append(
                    "the engine in `skill:` was dropped: pass `--model` to `caliper run`"
                )
        elif name in TOP_HINTS:
            edits.append(_remove(text, key, value, following))
            expected.pop(name)
            plan.notes.append(f"removed top-level `{name}:` ({_short_hint(name)})")
    tasks_node = _child(root, "tasks")
    expected_tasks = [dict(t) if isinstance(t, dict) else t for t in data.get("tasks") or []]
    if isinstance(tasks_node, yaml.SequenceNode) and isinstance(data.get("tasks"), list):
        for index, item in enumerate(tasks_node.value):
            if not isinstance(item, yaml.MappingNode):
                continue
            item_pairs = item.value
            for position, (key, value) in enumerate(item_pairs):
                name = key.value if isinstance(key, yaml.ScalarNode) else None
                if name not in TASK_HINTS:
                    continue
                if item.flow_style:
                    give_up(f"{path}: tasks[{index}]: delete `{name}:` ({_short_hint(name)})")
                    return None
                following = item_pairs[position + 1][0] if position + 1 < len(item_pairs) else None
                edits.append(_remove(text, key, value, following))
                expected_tasks[index].pop(name)
                plan.notes.append(f"removed `{name}:` from tasks[{index}]")
        if expected_tasks:
            expected["tasks"] = expected_tasks
    if not edits:
        return text
    if root.flow_style:
        give_up(
            f"{path}: the spec is in flow style; by hand: " + "; ".join(plan.notes[first_note:])
        )
        return None
    new = text
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        new = new[: edit.start] + edit.text + new[edit.end :]
    try:
        if yaml.safe_load(new) == expected:
            return new
    except yaml.YAMLError:
        pass
    give_up(
        f"{path}: could not edit the spec safely; by hand: " + "; ".join(plan.notes[first_note:])
    )
    return None


def _short_hint(key: str) -> str:
    if key in ("skill",):
        return "see `skills:`"
    if key == "baseline":
        return "a control run is `caliper run SPEC --baseline`"
    if key in ("id", "task_id"):
        return "a task is identified by its `name:`"
    return "the engine is chosen at run time: `--model` / `--judge-model`"


def _child(mapping: yaml.MappingNode, name: str) -> yaml.Node | None:
    for key, value in mapping.value:
        if isinstance(key, yaml.ScalarNode) and key.value == name:
            return value
    return None


def _remove(
    text: str, key: yaml.Node, value: yaml.Node, following: yaml.Node | None, replacement: str = ""
) -> _Edit:
    """An edit that removes ``key: value`` from a block mapping (and puts ``replacement``)."""
    start = key.start_mark.index
    end = following.start_mark.index if following is not None else value.end_mark.index
    line_start = text.rfind("\n", 0, start) + 1
    # Not the last key: from the key to the next one, which takes this key's indentation.
    # The last key on a line of its own: that whole line (and the value's lines) go.
    if not text[line_start:start].strip() and following is None:
        if end > 0 and text[end - 1] == "\n":  # a block value ends at the next line's start
            return _Edit(line_start, end, replacement)
        newline = text.find("\n", end)
        rest = text[end:newline] if newline != -1 else text[end:]
        if not rest.strip():
            end = newline + 1 if newline != -1 else len(text)
            start = line_start
    return _Edit(start, end, replacement)


def _plain(value: str) -> str:
    """``value`` as a YAML scalar on one line (quoted when it must be)."""
    dumped = yaml.safe_dump(value, default_flow_style=True, width=10_000).strip()
    return dumped[: -len("...")].strip() if dumped.endswith("...") else dumped


# --- the skills a `/NAME` turn can name ------------------------------------------------------


@attrs_classes.frozen
class _Skill:
    name: str
    path: Path


def _declared_skills(spec_dir: Path, data: dict[Any, Any], plan: MigrationPlan) -> dict[str, Any]:
    """The declared skills by frontmatter name: a :class:`_Skill` for a local ``SKILL.md``,
    the entry itself for one that cannot be read here (a git source)."""
    entries = data.get("skills")
    if entries is None and isinstance(data.get("skill"), dict):
        entries = [data["skill"].get("path") or "./SKILL.md"]
    found: dict[str, Any] = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict):
            repo = entry.get("repo")
            path = entry.get("path") or "SKILL.md"
            found[f"git:{repo}:{path}"] = entry
            continue
        if not isinstance(entry, str):
            continue
        path = Path(os.path.normpath(spec_dir / Path(entry).expanduser()))
        if path.is_dir():
            path = path / "SKILL.md"
        checked = check_skill_file(path)
        if checked.frontmatter is not None:
            found[checked.frontmatter.name] = _Skill(checked.frontmatter.name, path)
    return found


def _skill_body(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    split = split_frontmatter(text)
    if split is None:
        return text.strip()
    lines = text.splitlines()
    closing = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    return "\n".join(lines[closing + 1 :]).strip()


def expand_slash_command(skill: _Skill, args: str) -> str:
    """The user turn a ``/NAME ARGS`` of the earlier tool becomes: the skill's instructions
    as its ``SKILL.md`` reads now, then what was typed after the command."""
    parts = [f"<command-name>/{skill.name}</command-name>"]
    if args:
        parts.append(f"<command-args>{args}</command-args>")
    parts += [
        "",
        f'<skill name="{skill.name}">',
        _skill_body(skill.path),
        "</skill>",
    ]
    if args:
        parts += ["", f"ARGUMENTS: {args}"]
    return "\n".join(parts)


# --- history files ---------------------------------------------------------------------------


def _migrate_history(
    path: Path, skills: dict[str, Any], where: str, plan: MigrationPlan
) -> FileChange | None:
    """The rewrite of one history file in the earlier format, or ``None`` (already in this
    format, or it cannot be converted: then ``plan.manual`` says why)."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            text = handle.read()
        data = yaml.safe_load(text)
    except FileNotFoundError:
        plan.manual.append(f"{where}: no such history file {path}")
        return None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        plan.manual.append(f"{path}: cannot read it as a history file: {_first_line(exc)}")
        return None
    if not isinstance(data, list):
        return None  # this format (or not a history at all: `caliper validate` says which)
    turns: list[tuple[str | None, dict[str, Any]]] = []
    why: list[str] = ["a list of turns became `turns:`"]
    for number, item in enumerate(data, 1):
        converted = _old_turn(path, number, item, skills, plan, why)
        if converted is None:
            return None
        turns += converted
    turns = _merge_user_turns(turns, why)
    if not turns:
        plan.manual.append(f"{path}: the history has no turns")
        return None
    if turns[-1][1].get("user") is not None:
        plan.manual.append(
            f"{path}: the history ends with a user turn; this format needs it to end with the "
            "assistant (the task's `prompt:` is the next user turn): move that text into the "
            "task's `prompt:`, or add the assistant's reply"
        )
        return None
    new = _render_history(path, turns)
    problems = _history_problems(path, new)
    if problems or not _renders_back(new, turns):
        plan.manual += problems or [f"{path}: the converted history did not read back the same"]
        return None
    return FileChange(path, text, new, tuple(dict.fromkeys(why)))


def _old_turn(
    path: Path,
    number: int,
    item: Any,
    skills: dict[str, Any],
    plan: MigrationPlan,
    why: list[str],
) -> list[tuple[str | None, dict[str, Any]]] | None:
    """One earlier turn as ``(comment, turn)`` pairs of this format (an assistant turn with
    shell calls becomes its text and one ``shell:`` turn per call)."""
    where = f"{path}: turn {number}"
    if not isinstance(item, dict) or set(item) - set(OLD_TURN_KEYS):
        plan.manual.append(f"{where}: expected `user:` or `assistant:` (with `shell:`)")
        return None
    user, assistant, shell = item.get("user"), item.get("assistant"), item.get("shell") or []
    if (user is None) == (assistant is None) or not isinstance(shell, list):
        plan.manual.append(f"{where}: a turn has exactly one of `user:` or `assistant:`")
        return None
    if user is not None:
        if not isinstance(user, str):
            plan.manual.append(f"{where}: `user:` is not text")
            return None
        return [_user_turn(path, number, user, skills, plan, why)]
    out: list[tuple[str | None, dict[str, Any]]] = []
    if not isinstance(assistant, str):
        plan.manual.append(f"{where}: `assistant:` is not text")
        return None
    if assistant.strip():
        out.append((None, {"assistant": assistant}))
    for call in shell:
        if (
            not isinstance(call, dict)
            or set(call) - set(OLD_SHELL_KEYS)
            or not isinstance(call.get("run"), str)
        ):
            plan.manual.append(f"{where}: each `shell:` call needs `run:` and `output:`")
            return None
        output = call.get("output")
        out.append(
            (None, {"shell": {"command": call["run"], "output": "" if output is None else output}})
        )
    if shell:
        why.append("`shell: [{run, output}]` calls became `shell: {command, output}` turns")
    return out


def _user_turn(
    path: Path,
    number: int,
    text: str,
    skills: dict[str, Any],
    plan: MigrationPlan,
    why: list[str],
) -> tuple[str | None, dict[str, Any]]:
    match = SLASH_COMMAND.fullmatch(text.strip())
    if match is None:
        return None, {"user": text}
    name, args = match[1], (match[2] or "").strip()
    skill = skills.get(name)
    if isinstance(skill, _Skill):
        why.append(f"turn {number}, /{name}, expanded from {skill.path}")
        comment = f"/{name} of the earlier tool, expanded by `caliper migrate` from {skill.path}"
        return comment, {"user": expand_slash_command(skill, args)}
    if any(isinstance(s, dict) for s in skills.values()):
        plan.manual.append(
            f"{path}: turn {number} is /{name}; if it names a skill from a git source, replace "
            "the turn with that skill's instructions by hand (the migration reads local skills "
            "only)"
        )
    else:
        plan.notes.append(
            f"{path}: turn {number} opens with /{name}, which names no declared skill; "
            "it stays plain text (as it did before)"
        )
    return None, {"user": text}


def _merge_user_turns(
    turns: list[tuple[str | None, dict[str, Any]]], why: list[str]
) -> list[tuple[str | None, dict[str, Any]]]:
    merged: list[tuple[str | None, dict[str, Any]]] = []
    for comment, turn in turns:
        if merged and "user" in turn and "user" in merged[-1][1]:
            previous_comment, previous = merged[-1]
            joined = {"user": previous["user"].rstrip("\n") + "\n\n" + turn["user"]}
            merged[-1] = (previous_comment or comment, joined)
            why.append("two user turns in a row were merged into one")
            continue
        merged.append((comment, turn))
    return merged


class _HistoryDumper(yaml.SafeDumper):
    """Writes multi-line strings as ``|`` blocks where YAML allows it."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_HistoryDumper.add_representer(str, _represent_str)


def _render_history(path: Path, turns: list[tuple[str | None, dict[str, Any]]]) -> str:
    lines = [
        f"# Converted by `caliper migrate` from the earlier list-of-turns format of {path.name}.",
        "turns:",
    ]
    for comment, turn in turns:
        if comment:
            lines.append(f"  # {comment}")
        dumped = yaml.dump(
            [turn], Dumper=_HistoryDumper, sort_keys=False, allow_unicode=True, width=100
        )
        lines += ["  " + line if line else line for line in dumped.splitlines()]
    return "\n".join(lines) + "\n"


def _renders_back(new: str, turns: list[tuple[str | None, dict[str, Any]]]) -> bool:
    """Whether ``new`` reads back as exactly ``turns`` (a guard on the YAML written)."""
    return yaml.safe_load(new) == {"turns": [turn for _, turn in turns]}


def _history_problems(path: Path, text: str) -> list[str]:
    """What this format's history check finds in ``text`` (empty when it is a valid history)."""
    document, problems = parse_yaml(path, text)
    if document is None or problems:
        return [p.render() for p in problems]
    report = Reporter(document)
    check_document(report, document.data)
    return [p.render() for p in report.problems]
