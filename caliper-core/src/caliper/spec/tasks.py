"""Check the ``tasks:`` list: core keys, judge-owned keys, and each judge's own validation."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from caliper.plugin.judge import Judge, ValueProblem
from caliper.spec.fields import Reporter, did_you_mean, type_name
from caliper.spec.model import CORE_TASK_KEYS, Task
from caliper.spec.sections import TASK_HINTS
from caliper.spec.yamldoc import format_path
from caliper.system import attrs_classes

if TYPE_CHECKING:
    from caliper.plugin.conversation import (
        PlantedConversation,  # read only for a task with `history:`
    )

OPTIONAL_CORE = ("setup", "cleanup")
# Keys of first-party judges that live in other distributions, for "did you mean".
KNOWN_JUDGE_KEYS = ("assert", "expect", "activates", "tools")
# First-party judges shipped outside caliper-core: task key → distribution.
JUDGE_DISTRIBUTIONS = {"expect": "caliper-judge-llm"}


@attrs_classes.frozen
class Neighbourhood:
    """The skill names validation knows, and whether they are all of them.

    ``complete`` is false when a git source could not be looked at (not cached); then a name
    that is not in ``names`` may still be right, and is reported as a note instead.
    """

    names: tuple[str, ...]
    complete: bool = True
    unknown_sources: tuple[str, ...] = ()


class TaskChecker:
    """Validates ``tasks:`` against the installed judges and builds :class:`Task` objects."""

    def __init__(
        self,
        report: Reporter,
        judges: Mapping[str, Judge],
        *,
        spec_dir: Path,
        neighbourhood: Neighbourhood,
        judge_failures: Mapping[str, str] | None = None,
    ):
        self.report = report
        self.judges = judges
        self.spec_dir = spec_dir
        self.neighbourhood = neighbourhood
        self.judge_failures = dict(judge_failures or {})
        self.notes: list[str] = []

    def check(self, value: Any) -> tuple[Task, ...]:
        """Every task that is fine; problems for the rest are in the reporter."""
        if value is None:
            self.report.error(("tasks",), "the spec needs at least one task under `tasks:`")
            return ()
        if not isinstance(value, list):
            self.report.error(("tasks",), f"expected a list of tasks, found {type_name(value)}")
            return ()
        if not value:
            self.report.error(("tasks",), "the spec needs at least one task under `tasks:`")
            return ()
        tasks = []
        names: dict[str, int] = {}
        for index, entry in enumerate(value):
            task, name = self._task(index, entry)
            if name is not None and name in names:
                self.report.error(
                    ("tasks", index, "name"),
                    f"duplicate task name {name!r} (also tasks[{names[name]}]); "
                    "results are matched by task name, so each must be unique",
                )
                continue
            if name is not None:
                names[name] = index
            if task is not None:
                tasks.append(task)
        return tuple(tasks)

    def _key_problem(self, key: Any) -> str:
        if key in self.judge_failures:
            return (
                f"the judge for {key!r} is installed but failed to load: {self.judge_failures[key]}"
            )
        from caliper.host.install_hints import add_distribution

        known = [*CORE_TASK_KEYS, *self.judges]
        if isinstance(key, str) and key in TASK_HINTS:
            return TASK_HINTS[key]
        distribution = JUDGE_DISTRIBUTIONS.get(key) if isinstance(key, str) else None
        if distribution is not None:
            install = add_distribution(distribution)
            return (
                f"no installed judge provides {key!r}: it comes with the {distribution} "
                f"plugin (part of caliper-eval). Install it: {install}."
            )
        candidates = [*known, *(k for k in KNOWN_JUDGE_KEYS if k not in known and k != key)]
        hint = did_you_mean(key, candidates)
        if not hint and isinstance(key, str) and key in KNOWN_JUDGE_KEYS:
            hint = " Its judge is not installed (see `caliper plugins`)."
        return (
            f"unknown task key {key!r}.{hint} Expected one of: {', '.join(known)}"
            " (task keys are the core keys plus those of installed judges)."
        )

    def _task(self, index: int, entry: Any) -> tuple[Task | None, str | None]:
        """The task (``None`` when it has problems) and its name (when it has a valid one)."""
        report = self.report
        path: tuple[Any, ...] = ("tasks", index)
        if not isinstance(entry, dict):
            report.error(
                path,
                f"expected a task (a mapping with name:, prompt: and a check), "
                f"found {type_name(entry)}",
            )
            return None, None
        before = len(report.problems)
        unknown = [k for k in entry if k not in CORE_TASK_KEYS and k not in self.judges]
        for key in unknown:
            report.error((*path, key), self._key_problem(key), key=True)

        name, prompt, hooks = self._core_fields(path, entry)
        conversation = None
        if "history" in entry:
            conversation = self._conversation((*path, "history"), entry["history"])
        checks: dict[str, Any] = {}
        for key, value in entry.items():
            judge = self.judges.get(key) if key not in CORE_TASK_KEYS else None
            if judge is None:
                continue
            if self._validate(judge, (*path, key), value):
                checks[key] = value
        has_check = any(k in self.judges and k not in CORE_TASK_KEYS for k in entry)
        if not has_check and not unknown:
            offered = ", ".join(f"`{k}:`" for k in self.judges) or "none installed"
            report.error(path, f"the task has no check; add at least one of {offered}")
        activation_key, expected = self._activation(path, checks)
        if len(report.problems) != before or name is None or prompt is None:
            return None, name
        line = report.document.position(path)
        return Task(
            name=name,
            prompt=prompt,
            index=index,
            setup=hooks.get("setup"),
            cleanup=hooks.get("cleanup"),
            checks=checks,
            line=line[0] if line else None,
            conversation=conversation,
            activation_key=activation_key,
            expected_skills=expected,
        ), name

    def _activation(
        self, path: tuple[Any, ...], checks: Mapping[str, Any]
    ) -> tuple[str | None, tuple[str, ...]]:
        """The task's activation check (the first whose judge declares ``scores_activation``)
        and the skills it expects."""
        for key, value in checks.items():
            judge = self.judges[key]
            if not judge.scores_activation:
                continue
            try:
                return key, tuple(str(name) for name in judge.expected_skills(value))
            except Exception as exc:  # a plugin bug must not become a traceback
                self.report.error(
                    (*path, key),
                    f"the {key!r} judge failed to say which skills this value expects: "
                    f"{type(exc).__name__}: {exc}",
                )
        return None, ()

    def _core_fields(
        self, path: tuple[Any, ...], entry: dict[Any, Any]
    ) -> tuple[str | None, str | None, dict[str, str | None]]:
        """``name``, ``prompt`` and the ``setup``/``cleanup`` commands, each checked."""
        report = self.report
        name = prompt = None
        if "name" not in entry:
            report.error(path, "the task needs `name:`")
        else:
            name = report.string((*path, "name"), entry["name"], what="a task name")
        if "prompt" not in entry:
            report.error(path, "the task needs `prompt:` (what is sent to the agent)")
        else:
            prompt = report.string((*path, "prompt"), entry["prompt"], what="a prompt")
        hooks = {
            key: report.string((*path, key), entry[key], what="a shell command")
            for key in OPTIONAL_CORE
            if key in entry
        }
        return name, prompt, hooks

    def _conversation(self, path: tuple[Any, ...], value: Any) -> PlantedConversation | None:
        """Read and check the task's ``history:`` file; its problems go to the reporter."""
        declared = self.report.string(path, value, what="the path of a history file")
        if declared is None:
            return None
        from caliper.spec.conversation import load_conversation

        conversation, reason, problems = load_conversation(declared, self.spec_dir)
        if reason is not None:
            self.report.error(path, reason)
        self.report.problems.extend(problems)
        return conversation

    def _validate(self, judge: Judge, path: tuple[Any, ...], value: Any) -> bool:
        """Run the judge's own validation; map its problems to positions. True when clean."""
        try:
            found = list(
                judge.validate(
                    value, spec_dir=self.spec_dir, declared_skills=self.neighbourhood.names
                )
            )
        except Exception as exc:  # a plugin bug must not become a traceback
            self.report.error(
                path,
                f"the {judge.key!r} judge failed while checking this value: "
                f"{type(exc).__name__}: {exc}",
            )
            return False
        clean = True
        for problem in found:
            if self._unknowable(value, problem):
                item = _item(value, problem.path)
                self.notes.append(
                    f"{self.report.document.path}: {format_path((*path, *problem.path))}: "
                    f"could not check that {item!r} names a declared skill "
                    f"({'; '.join(self.neighbourhood.unknown_sources)})"
                )
                continue
            clean = False
            self.report.error((*path, *problem.path), problem.message)
        return clean

    def _unknowable(self, value: Any, problem: ValueProblem) -> bool:
        """A complaint about a skill name that an uncached git source might provide."""
        if self.neighbourhood.complete or not problem.path:
            return False
        item = _item(value, problem.path)
        return isinstance(item, str) and item not in self.neighbourhood.names


def _item(value: Any, path: tuple[str | int, ...]) -> Any:
    for part in path:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            return None
    return value
