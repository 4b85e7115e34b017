"""Assembling a run's results: a pure function from what the run has to :class:`RunResults`.

Input: the spec and k, every attempt as one JSON line in stored form (a sequence, read again
line by line as the text is written) (the plan's carried
attempts and the finished ones, exactly as the journal holds them), how to make the run's
metadata from its attempt records, the tasks ``--fail-fast`` aborted and why ``--k auto``
stopped each task. Output: the results (what a reader of the saved file gets) and the file's
text, made piece by piece when it is written, so the whole text is never held in memory. No
file is read or written here: :mod:`.journaling` does the I/O around it.

The text is the one :func:`caliper.results.codec.dumps_data` makes of the assembled data
(:func:`caliper.results.journal.assemble`): indented JSON, each attempt in its task sorted by
number, an attempt of a task the spec does not list left out.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from caliper.results import codec, compact
from caliper.results.models import AttemptRecord, RunResults, TaskResult
from caliper.system import attrs_classes
from caliper.system.textsafe import well_formed

if TYPE_CHECKING:
    from caliper.results.models import RunMeta
    from caliper.spec.model import Spec

INDENT = "  "
SHARED_TEXT_CHARS = 256
"""Texts up to this long are shared between the decoded records (see :class:`_SharedText`)."""
ATTEMPT_LEVEL = 4
"""How deep an attempt sits in the file: the run, its tasks, a task, its attempts."""


class RunText:
    """The text of a results file, made piece by piece each time it is iterated (it is
    written more than once: the store, then an ``--output`` copy); ``str(...)`` is all of it.
    """

    def __init__(
        self,
        meta: dict[str, Any],
        entries: Sequence[dict[str, Any]],
        lines: Sequence[str],
        by_task: Mapping[str, Sequence[int]],
    ) -> None:
        self._meta = meta
        self._entries = entries
        self._lines = lines
        self._by_task = by_task

    def __iter__(self) -> Iterator[str]:
        yield "{\n" + INDENT + '"meta": ' + _nested(self._meta, 1) + ",\n" + INDENT + '"tasks": '
        if not self._entries:
            yield "[]\n}\n"
            return
        yield "["
        for number, entry in enumerate(self._entries):
            yield from self._task(entry, last=number == len(self._entries) - 1)
        yield "\n" + INDENT + "]\n}\n"

    def __str__(self) -> str:
        return "".join(self)

    def _task(self, entry: dict[str, Any], *, last: bool) -> Iterator[str]:
        """One task of the ``tasks`` list (level 2), its attempts re-indented one by one."""
        inner = "\n" + INDENT * 3
        yield "\n" + INDENT * 2 + "{"
        for number, (key, value) in enumerate(entry.items()):
            yield ("" if number == 0 else ",") + inner + json.dumps(key, ensure_ascii=False) + ": "
            if key != "attempts":
                yield _nested(value, 3)
                continue
            places = self._by_task.get(str(entry.get("name")), ())
            if not places:
                yield "[]"
                continue
            yield "["
            for index, place in enumerate(places):
                attempt = json.loads(self._lines[place])
                yield ("," if index else "") + "\n" + INDENT * ATTEMPT_LEVEL + _nested(attempt, 4)
            yield inner + "]"
        yield "\n" + INDENT * 2 + "}" + ("" if last else ",")


def _nested(value: Any, level: int) -> str:
    """``value`` as indented JSON whose lines after the first sit ``level`` levels deep
    (indented JSON never holds a raw newline inside a string, so re-indenting is safe)."""
    text = json.dumps(value, indent=2, ensure_ascii=False, default=codec.json_fallback)
    return well_formed(text).replace("\n", "\n" + INDENT * level)


@attrs_classes.frozen
class AssembledRun:
    """A run's results file (``text``, as saved) and the results it holds."""

    text: RunText
    results: RunResults


def task_entries(spec: Spec, k: int) -> list[dict[str, Any]]:
    """Each task of ``spec``, without attempts, in the stored form of the results file."""
    return [
        codec.converter().unstructure(
            TaskResult(
                name=task.name,
                index=task.index,
                k=k,
                activation_expected=task.activates,
                check_keys=list(task.checks),
            )
        )
        for task in spec.tasks
    ]


class _SharedText:
    """One ``str`` object for each short text that recurs across the attempts (roles, tool
    and skill names, the model, check keys and reasons), so the records decoded from many
    lines do not each hold a copy: a run's results hold thousands of them."""

    def __init__(self) -> None:
        self._seen: dict[str, str] = {}

    def _one(self, value: Any) -> Any:
        if type(value) is str and len(value) <= SHARED_TEXT_CHARS:
            return self._seen.setdefault(value, value)
        return value

    def object_hook(self, data: dict[str, Any]) -> dict[str, Any]:
        """``json.loads``'s hook: ``data`` with its texts (and those of its lists) shared."""
        one = self._one
        for key, value in data.items():
            if type(value) is list:
                data[key] = [one(item) for item in value]
            else:
                data[key] = one(value)
        return data


def _records_by_task(
    names: Iterable[str], lines: Sequence[str]
) -> dict[str, list[tuple[int, int, AttemptRecord]]]:
    """Each attempt (of a task in ``names``): its number, the place of its line in ``lines``
    and its record, per task, sorted by number (a stable sort: lines of the same number keep
    their order)."""
    found: dict[str, list[tuple[int, int, AttemptRecord]]] = {name: [] for name in names}
    converter = codec.converter()
    shared = _SharedText()
    with codec.gc_paused():
        for place, line in enumerate(lines):
            data = json.loads(line, object_hook=shared.object_hook)
            kept = found.get(str(data.get("task_name")))
            if kept is None:
                continue
            number = data.get("attempt") or 0
            compact.expand_attempt(data)
            kept.append((number, place, converter.structure(data, AttemptRecord)))
    for kept in found.values():
        kept.sort(key=lambda item: item[0])
    return found


def assemble_results(
    meta_for: Callable[[list[AttemptRecord]], RunMeta],
    spec: Spec,
    k: int,
    lines: Sequence[str],
    *,
    aborted: Iterable[str] = (),
    task_stop_reasons: Mapping[str, str] | None = None,
) -> AssembledRun:
    """The results of a run whose attempts (stored form, one JSON line each) are ``lines``
    and whose metadata ``meta_for`` makes from its attempt records.

    Attempts are sorted into their tasks by number; a task in ``aborted`` is marked so;
    ``task_stop_reasons`` says why an adaptive task stopped. The results hold what a reader
    of the text gets: every attempt and the metadata as their JSON reads back.
    """
    aborted = set(aborted)
    entries = task_entries(spec, k)
    by_task = _records_by_task((str(entry["name"]) for entry in entries), lines)
    records = [record for kept in by_task.values() for _, _, record in kept]
    meta = json.loads(codec.line(codec.converter().unstructure(meta_for(records))))
    for number, entry in enumerate(entries):
        entry = entries[number] = {key: v for key, v in entry.items() if key != "attempts"}
        entry["attempts"] = []
        entry["aborted"] = entry["name"] in aborted
        if task_stop_reasons and entry["name"] in task_stop_reasons:
            entry["stop_reason"] = task_stop_reasons[entry["name"]]
    results = codec.from_data({"meta": meta, "tasks": json.loads(json.dumps(entries))})
    for task in results.tasks:
        task.attempts = [record for _, _, record in by_task.get(task.name, ())]
    places = {name: [place for _, place, _ in kept] for name, kept in by_task.items()}
    return AssembledRun(text=RunText(meta, entries, lines, places), results=results)
