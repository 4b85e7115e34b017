"""Probe sets: prompts with the activation they should cause, read from three formats.

A probe says which skills an agent *should* load for a prompt: either ``should_trigger``
(the tuned skill should load, or should not) or an exact ``activates`` set when several
skills compete. Probe sets come from

* a probe file (YAML or JSON): ``probes:`` with ``prompt`` and ``should_trigger`` or
  ``activates``, an optional ``skills:`` neighbourhood (``docs/tuning.md``);
* Anthropic skill-creator's trigger-eval JSON: ``[{"query": ..., "should_trigger": ...}]``;
* a caliper spec (``*.eval.yaml``): its tasks with ``activates:``, the spec's ``skills:``
  being the neighbourhood.

Malformed input becomes :class:`~caliper.spec.problems.Problem` values with file:line:column
(raised together as one :class:`ProbesInvalid`, exit 2).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from caliper.host.plugins import PluginHost
from caliper.spec.fields import Reporter, type_name
from caliper.spec.load import load_spec
from caliper.spec.problems import Problem, SpecInvalid
from caliper.spec.yamldoc import Document, load_document
from caliper.system import attrs_classes

PROBE_KEYS = ("prompt", "should_trigger", "activates", "name")
TRIGGER_EVAL_KEYS = ("query", "should_trigger")
FILE_KEYS = ("skill", "skills", "probes")


class ProbesInvalid(SpecInvalid):
    """A probe set has one or more problems (exit 2); ``problems`` lists them all."""

    def __init__(self, problems: list[Problem]):
        super().__init__(
            problems,
            hint="Fix the probe file (the formats are in docs/tuning.md, 'Probe sets').",
        )


@attrs_classes.frozen
class Probe:
    """One prompt and the activation expected of it.

    Exactly one of ``should_trigger`` (about the tuned skill only) and ``activates`` (the
    exact set of skills that should load, competitors included) is set. ``line`` is where
    it was written, for messages.
    """

    name: str
    prompt: str
    should_trigger: bool | None = None
    activates: tuple[str, ...] | None = None
    line: int | None = None

    def expects_target(self, target: str) -> bool:
        """Whether the tuned skill ``target`` should load for this prompt."""
        if self.activates is not None:
            return target in self.activates
        return bool(self.should_trigger)

    def correct(self, target: str, activated: Sequence[str]) -> bool:
        """Whether one attempt that loaded ``activated`` did what the probe asks."""
        if self.activates is not None:
            return set(activated) == set(self.activates)
        return (target in activated) == bool(self.should_trigger)

    def expected_set(self, target: str) -> list[str]:
        """The ``activates:`` list a spec task for this probe asserts."""
        if self.activates is not None:
            return list(self.activates)
        return [target] if self.should_trigger else []

    def to_json(self) -> dict[str, Any]:
        """Plain data (the saved split and tuning summary)."""
        data: dict[str, Any] = {"name": self.name, "prompt": self.prompt}
        if self.activates is not None:
            data["activates"] = list(self.activates)
        else:
            data["should_trigger"] = self.should_trigger
        return data


@attrs_classes.frozen
class ProbeSet:
    """Probes plus the neighbourhood they were written for.

    ``skill_paths`` are extra skills (absolute folders or ``SKILL.md`` files) installed beside
    the tuned one so competitors are real; ``spec`` is set when the probes came from a spec
    (its ``skills:`` are then the neighbourhood, git sources included). ``source`` is the
    file read and ``format`` one of ``probes``, ``trigger-eval``, ``spec``.
    """

    probes: tuple[Probe, ...]
    source: Path
    format: str
    skill: str | None = None
    skill_paths: tuple[Path, ...] = ()
    spec: Any = None


def _problem(path: Path, message: str, line: int | None = 1) -> Problem:
    return Problem(path, line, 1 if line else None, "", message)


def _name_for(index: int, prompt: str) -> str:
    words = " ".join(prompt.split())
    short = words if len(words) <= 48 else words[:45].rstrip() + "..."
    return f"probe {index + 1}: {short}"


def _unique_names(probes: list[Probe]) -> list[Probe]:
    seen: dict[str, int] = {}
    out = []
    for probe in probes:
        count = seen.get(probe.name, 0)
        seen[probe.name] = count + 1
        out.append(probe if count == 0 else attrs.evolve(probe, name=f"{probe.name} ({count + 1})"))
    return out


def _check_probe(report: Reporter, item: Any, path: tuple, *, keys: Sequence[str]) -> Probe | None:
    """One probe from a mapping in a probe file or trigger-eval list (or ``None``)."""
    index = path[-1]
    if not isinstance(item, dict):
        report.error(path, f"expected a mapping with `{keys[0]}:`, found {type_name(item)}")
        return None
    report.unknown_keys(path, item, keys, what="a probe")
    text_key = keys[0]
    prompt = None
    if text_key in item:
        prompt = report.string((*path, text_key), item[text_key], what=f"the probe's {text_key}")
    else:
        report.error(path, f"missing `{text_key}:` (the prompt to send)")
    trigger = item.get("should_trigger")
    activates = item.get("activates")
    if "activates" in keys and "should_trigger" in item and "activates" in item:
        report.error(path, "give either `should_trigger:` or `activates:`, not both")
        return None
    if "should_trigger" in item:
        if not isinstance(trigger, bool):
            report.error(
                (*path, "should_trigger"), f"expected true or false, found {type_name(trigger)}"
            )
            return None
    elif "activates" in item and "activates" in keys:
        names = report.string_list((*path, "activates"), activates, what="skill names")
        if names is None:
            return None
        if len(set(names)) != len(names):
            report.error((*path, "activates"), "a skill is listed twice")
            return None
        activates = tuple(names)
    else:
        wanted = "`should_trigger:` (true/false)" + (
            " or `activates:` (a list of skill names)" if "activates" in keys else ""
        )
        report.error(path, f"missing {wanted}: what should happen for this prompt")
        return None
    name = item.get("name")
    if name is not None and not isinstance(name, str):
        report.error((*path, "name"), f"expected a string, found {type_name(name)}")
        return None
    if prompt is None:
        return None
    position = report.document.position(path)
    return Probe(
        name=name or _name_for(index, prompt),
        prompt=prompt,
        should_trigger=trigger if "should_trigger" in item else None,
        activates=activates if "should_trigger" not in item else None,
        line=position[0] if position else None,
    )


def _probe_list(report: Reporter, items: Any, path: tuple, *, keys: Sequence[str]) -> list[Probe]:
    if not isinstance(items, list):
        report.error(path, f"expected a list of probes, found {type_name(items)}")
        return []
    if not items:
        report.error(path, "the probe list is empty")
        return []
    probes = [_check_probe(report, item, (*path, i), keys=keys) for i, item in enumerate(items)]
    return _unique_names([p for p in probes if p is not None])


def _from_document(document: Document) -> ProbeSet:
    report = Reporter(document)
    data = document.data
    path = document.path
    skill = None
    skill_paths: list[Path] = []
    if isinstance(data, list):
        keys = TRIGGER_EVAL_KEYS if _looks_like_trigger_eval(data) else PROBE_KEYS
        probes = _probe_list(report, data, (), keys=keys)
        fmt = "trigger-eval" if keys is TRIGGER_EVAL_KEYS else "probes"
    elif isinstance(data, dict):
        fmt = "probes"
        report.unknown_keys((), data, FILE_KEYS, what="a probe file")
        if "probes" not in data:
            report.error((), "missing `probes:` (the list of prompts)")
        skill = report.string(("skill",), data.get("skill"), what="a skill name", required=False)
        for index, entry in enumerate(
            report.string_list(("skills",), data.get("skills"), what="skill paths") or []
        ):
            target = (path.parent / Path(entry).expanduser()).resolve()
            if not target.exists():
                report.error(
                    ("skills", index),
                    f"{entry} does not exist (paths are relative to the probe file)",
                )
            else:
                skill_paths.append(target)
        probes = (
            _probe_list(report, data.get("probes", []), ("probes",), keys=PROBE_KEYS)
            if "probes" in data
            else []
        )
    else:
        report.error(
            (),
            "a probe file is a list of probes or a mapping with `probes:`, found "
            + type_name(data),
        )
        probes, fmt = [], "probes"
    if report.problems:
        raise ProbesInvalid(report.problems)
    return ProbeSet(tuple(probes), path, fmt, skill=skill, skill_paths=tuple(skill_paths))


def _looks_like_trigger_eval(items: list[Any]) -> bool:
    first = next((i for i in items if isinstance(i, dict)), None)
    return first is not None and "query" in first and "prompt" not in first


def _from_spec(path: Path) -> ProbeSet:
    spec = load_spec(path, PluginHost().judges())
    probes = [
        Probe(name=task.name, prompt=task.prompt, activates=tuple(task.activates), line=task.line)
        for task in spec.tasks
        if task.activates is not None
    ]
    if not probes:
        raise ProbesInvalid(
            [_problem(path, "the spec has no task with `activates:`, so it holds no probes")]
        )
    return ProbeSet(tuple(probes), path, "spec", spec=spec)


def is_spec_path(path: Path) -> bool:
    """Whether ``path`` names a caliper spec rather than a probe file."""
    return path.name.endswith((".eval.yaml", ".eval.yml"))


def load_probes(path: Path) -> ProbeSet:
    """Read a probe set from ``path`` (format chosen by name and content, see module doc).

    Raises :class:`ProbesInvalid` listing every problem (exit 2).
    """
    path = Path(path)
    if is_spec_path(path):
        return _from_spec(path)
    document, problems = load_document(path, what="probe file")
    if document is None or problems:
        raise ProbesInvalid(problems or [_problem(path, "cannot be read")])
    if document.data is None:
        raise ProbesInvalid([_problem(path, "the probe file is empty")])
    return _from_document(document)
