"""Turning :class:`RunResults` into JSON-ready data and back.

One cattrs converter does both directions. Enums are written as their values and paths as
strings. Reading is forgiving in the two ways that matter for files written by other versions:
keys this version does not know are ignored, and optional fields a file lacks take their
defaults. What cannot be read raises :class:`ResultsDecodeError` with the reason.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import gc
import io
import json
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn
from cattrs.preconf.json import make_converter

from caliper.plugin.attempt import Usage
from caliper.results import compact
from caliper.results.compact import StorageLimits
from caliper.results.incremental import decode_run, decode_text
from caliper.results.models import (
    SCHEMA_VERSION,
    STORED_JUDGE_FIELDS,
    AttemptRecord,
    CheckRecord,
    RunResults,
    SkillSnapshot,
    TaskResult,
)
from caliper.results.record_builders import builder
from caliper.system.textsafe import well_formed

Decode = Callable[[Callable[[dict[str, Any]], Any], Callable[[dict[str, Any]], Any]], Any]
"""A decoding of a run's text that turns each attempt's dict, then each task's, with the two
callbacks it is given (:func:`caliper.results.incremental.decode_run`)."""


class ResultsDecodeError(ValueError):
    """The data is not a caliper run (wrong shape, wrong types, missing required fields)."""


def _structure_snapshot(converter: cattrs.Converter, data: Any, cls: type) -> SkillSnapshot:
    # Files from before git sources existed carry no source_kind: every member was a path.
    if isinstance(data, dict):
        data = dict(data)
        data.setdefault("source_kind", "path")
        data.setdefault("declared_as", data.get("name", ""))
    return converter.structure_attrs_fromdict(data, cls)


def _unstructure_check(converter: cattrs.Converter, check: CheckRecord) -> dict[str, Any]:
    # The typed judge fields are stored inside details, as files have always held them.
    details = converter.unstructure(check.details)
    for field, stored in STORED_JUDGE_FIELDS.items():
        value = getattr(check, field)
        if value is not None:
            details[stored] = converter.unstructure(value)
    return {
        "key": check.key,
        "passed": check.passed,
        "reason": check.reason,
        "error": check.error,
        "details": details,
    }


def _stored_check(data: Any) -> Any:
    """A stored check's data with the typed judge fields taken out of its details (a copy;
    ``data`` is not changed)."""
    if isinstance(data, dict) and isinstance(data.get("details"), dict):
        data = dict(data)
        details = dict(data["details"])
        for field, stored in STORED_JUDGE_FIELDS.items():
            if stored in details and field not in data:
                data[field] = details.pop(stored)
        if not isinstance(data.get("usage"), (dict, type(None))):
            data["usage"] = None  # a third-party judge's own value under the same name
        data["details"] = details
    return data


def _structure_check(converter: cattrs.Converter, data: Any, cls: type) -> CheckRecord:
    return converter.structure_attrs_fromdict(_stored_check(data), cls)


@functools.cache
def converter() -> cattrs.Converter:
    """The converter used for every results file (built once)."""
    conv = make_converter(forbid_extra_keys=False, omit_if_default=False)
    conv.register_unstructure_hook(Path, str)
    conv.register_structure_hook(Path, lambda value, _cls: Path(value))
    conv.register_structure_hook(
        SkillSnapshot, lambda data, cls: _structure_snapshot(conv, data, cls)
    )
    conv.register_unstructure_hook(Usage, Usage.data)
    conv.register_unstructure_hook(CheckRecord, lambda check: _unstructure_check(conv, check))
    conv.register_structure_hook(CheckRecord, lambda data, cls: _structure_check(conv, data, cls))
    return conv


def _is_optional(cls: Any) -> bool:
    """Whether ``cls`` is ``X | None`` (or ``Optional[X]``) for one type ``X``."""
    args = typing.get_args(cls)
    return (
        typing.get_origin(cls) in (typing.Union, types.UnionType)
        and len(args) == 2
        and type(None) in args
    )


@functools.cache
def _reading_converter() -> cattrs.Converter:
    """The converter the incremental read (:func:`read_file`, :func:`loads`) structures
    attempts and tasks with: for a well-formed run the same values as :func:`converter`,
    with fewer calls per value. It makes its functions without cattrs' detailed validation,
    looks up the hook of ``X`` in ``X | None`` and ``list[X]`` once (cattrs' own looks it up
    for every value), and structures a check with a generated function (cattrs'
    ``structure_attrs_fromdict`` dispatches on every field). Its errors say less: a run it
    cannot read is read again by :func:`from_data`, which says what is wrong."""
    conv = make_converter(forbid_extra_keys=False, omit_if_default=False, detailed_validation=False)
    conv.register_structure_hook(Path, lambda value, _cls: Path(value))
    conv.register_structure_hook(
        SkillSnapshot, lambda data, cls: _structure_snapshot(conv, data, cls)
    )

    def called(cls: Any) -> bool:  # structured as cls(value): str, int, float, bool, enums
        return conv.get_structure_hook(cls) is cattrs.BaseConverter._structure_call

    def optional(cls: Any) -> Callable[[Any, Any], Any]:
        inner_cls = next(arg for arg in typing.get_args(cls) if arg is not type(None))
        if called(inner_cls):
            return lambda value, _cls: None if value is None else inner_cls(value)
        inner = conv.get_structure_hook(inner_cls)
        return lambda value, _cls: None if value is None else inner(value, inner_cls)

    def listed(cls: Any) -> Callable[[Any, Any], Any]:
        (item,) = typing.get_args(cls)
        return lambda value, _cls: [item(each) for each in value]

    conv.register_structure_hook_factory(_is_optional, optional)
    conv.register_structure_hook_factory(
        lambda cls: (
            typing.get_origin(cls) is list
            and len(typing.get_args(cls)) == 1
            and called(typing.get_args(cls)[0])
        ),
        listed,
    )
    check = make_dict_structure_fn(CheckRecord, conv, _cattrs_detailed_validation=False)
    conv.register_structure_hook(CheckRecord, lambda data, cls: check(_stored_check(data), cls))
    return conv


def _attempt_structuring(shared: _SharedStrings) -> Callable[[dict[str, Any]], AttemptRecord]:
    """Structuring of one attempt's decoded dict for the incremental read, its repeated
    strings kept once in ``shared``: its generated builder
    (:mod:`caliper.results.record_builders`), and the reading converter for a dict the
    builder leaves to it (the same record, or the converter's error)."""
    conv = _reading_converter()
    structure = conv.get_structure_hook(AttemptRecord)
    build = builder(conv, AttemptRecord, _stored_check, shared.table.setdefault)

    def structure_attempt(attempt: dict[str, Any]) -> AttemptRecord:
        if build is not None:
            try:
                return build(attempt)  # the dict is left as it was when this raises
            except Exception:  # any: the converter decides, or says what is wrong
                pass
        shared.attempt(attempt)
        return structure(attempt, AttemptRecord)

    return structure_attempt


def prepare_structuring() -> None:
    """Have the converter make its functions for decoding a :class:`RunResults` now (cattrs
    generates and compiles them on first use), e.g. while a run's agents work, so
    the run's end does not wait for it."""
    converter().get_structure_hook(RunResults)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block, as it was before after it.

    Decoding a big run builds millions of dicts, lists and attrs objects, none of them in a
    reference cycle (refcounting frees them), yet every collection the allocations trigger
    rescans all that survived so far: about half of the decoding time of a 50,000-attempt
    file went to collections that could find nothing.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def kept_until_exit() -> Iterator[None]:
    """Read runs in this block for a command that prints them and exits: the collector is
    paused while they are decoded, then everything alive is taken out of its sight
    (``gc.freeze``) before it runs again.

    A decoded 50,000-attempt run is a million objects that stay until the process ends; the
    first collection after decoding, and every full one while the report is scored and
    printed, would rescan them all (about a third of that time). Frozen objects are still
    freed by reference counting; only a cycle among them would outlive the command.
    """
    with gc_paused():
        yield
        gc.freeze()


def to_data(results: RunResults) -> dict[str, Any]:
    """``results`` as plain JSON-ready data (dicts, lists, strings, numbers, ``None``)."""
    return converter().unstructure(results)


def to_data_by_attempt(results: RunResults) -> dict[str, Any]:
    """:func:`to_data` of ``results``, except that every task's ``attempts`` still holds
    the :class:`AttemptRecord` objects: :func:`json_pieces` turns each into its data only
    as it writes it, so a big run's data never exists whole next to its records."""
    conv = converter()
    data = conv.unstructure(attrs.evolve(results, tasks=[]))
    data["tasks"] = [
        {**conv.unstructure(attrs.evolve(task, attempts=[])), "attempts": list(task.attempts)}
        for task in results.tasks
    ]
    return data


def json_pieces(data: Any, *, size: int = 1 << 16) -> Iterator[str]:
    """The text of ``json.dumps(data, indent=2, ensure_ascii=False)``, in pieces of about
    ``size`` characters, with each :class:`AttemptRecord` in ``data`` (see
    :func:`to_data_by_attempt`) written as :func:`to_data` writes it. Joined, the pieces are
    the same text character for character; nothing holds it whole."""
    conv = converter()

    def attempt(value: Any) -> Any:
        if isinstance(value, AttemptRecord):
            return conv.unstructure(value)
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    encoder = json.JSONEncoder(indent=2, ensure_ascii=False, default=attempt)
    held: list[str] = []
    length = 0
    for piece in encoder.iterencode(data):
        held.append(piece)
        length += len(piece)
        if length >= size:
            yield "".join(held)
            held, length = [], 0
    if held:
        yield "".join(held)


def from_data(data: Any, *, transcripts: bool = True) -> RunResults:
    """A :class:`RunResults` from plain data, e.g. a parsed results file.

    A final answer written once (``final_answer_turn``) is put back into its transcript turn;
    ``data`` is changed in place for that. With ``transcripts=False`` every attempt's
    ``transcript`` is left out (``None``): a summary for reading commands (``report``,
    ``list``, ``compare``) that never look at turns, decoded without building every
    :class:`~caliper.results.models.Turn` (most of a big run's time and memory).
    """
    _check_meta(data)
    with gc_paused():
        if transcripts:
            compact.expand_run(data)
        else:
            _drop_transcripts(data)
        return _structure(data)


def check(data: Any) -> None:
    """Raise :class:`ResultsDecodeError` unless ``data`` (a parsed results file) decodes as
    :func:`from_data` would decode it, with the same message; ``data`` is not changed.

    Putting a final answer back into its turn cannot make a valid run invalid or an invalid
    one valid (both are text or ``None``), so the stored form is checked as it is.
    """
    _check_meta(data)
    with gc_paused():
        _structure(data)


def _check_meta(data: Any) -> None:
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict):
        raise ResultsDecodeError("it has no 'meta' object, so it is not a caliper results file")
    missing = [k for k in ("run_id", "spec_name") if k not in data["meta"]]
    if missing:
        raise ResultsDecodeError(
            f"its 'meta' lacks {', '.join(missing)}, so it is not a caliper results file"
        )


def _structure(data: dict[str, Any]) -> RunResults:
    try:
        return converter().structure(data, RunResults)
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as exc:
        raise ResultsDecodeError(_describe(exc)) from exc


def _drop_transcripts(data: dict[str, Any]) -> None:
    tasks = data.get("tasks")
    for task in tasks if isinstance(tasks, list) else []:
        attempts = task.get("attempts") if isinstance(task, dict) else None
        for attempt in attempts if isinstance(attempts, list) else []:
            if isinstance(attempt, dict):
                attempt.pop(compact.FINAL_ANSWER_TURN, None)
                attempt["transcript"] = None


def dumps(results: RunResults, limits: StorageLimits | None = None) -> str:
    """``results`` as the text of a results file (indented, UTF-8 safe, newline at the end).

    A value JSON cannot hold (say, a set or an object inside a tool call's input) is written
    as a list or as its string form rather than failing the save. A lone surrogate in any
    text (agent output can carry one) becomes U+FFFD, so the file is always valid UTF-8.
    Each attempt's text is stored once and capped by ``limits`` (default
    :class:`~caliper.results.compact.StorageLimits`; see :mod:`caliper.results.compact`).
    """
    data = to_data(results)
    compact.compact_run(data, limits if limits is not None else StorageLimits())
    text = json.dumps(data, indent=2, ensure_ascii=False, default=json_fallback)
    return well_formed(text) + "\n"


def attempt_data(record: AttemptRecord, limits: StorageLimits | None = None) -> dict[str, Any]:
    """One attempt as it is stored: JSON-ready, its text capped by ``limits`` and written once.

    The journal stores this form and the final file is assembled from it unchanged, so the
    caps are applied exactly once (capping again would cut the markers themselves).
    """
    data = converter().unstructure(record)
    compact.compact_attempt(data, limits if limits is not None else StorageLimits())
    return data


def attempt_from_data(data: dict[str, Any]) -> AttemptRecord:
    """An :class:`AttemptRecord` from its stored form (a copy is expanded; ``data`` is kept)."""
    expanded = copy.deepcopy(data)
    compact.expand_attempt(expanded)
    try:
        return converter().structure(expanded, AttemptRecord)
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as exc:
        raise ResultsDecodeError(_describe(exc)) from exc


def line(data: Any) -> str:
    """``data`` as one JSON line (no newline; UTF-8 safe), as the journal stores it."""
    return well_formed(json.dumps(data, ensure_ascii=False, default=json_fallback))


def dumps_data(data: Any) -> str:
    """Already stored-form run data (see :func:`attempt_data`) as the text of a results file."""
    text = json.dumps(data, indent=2, ensure_ascii=False, default=json_fallback)
    return well_formed(text) + "\n"


def json_fallback(value: Any) -> Any:
    """What a results file holds for a value JSON cannot (``default`` of ``json.dumps``)."""
    if isinstance(value, (set, frozenset, tuple)):
        return sorted(value, key=repr) if not isinstance(value, tuple) else list(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


def parse(text: str) -> Any:
    """The JSON data of a results file's text (:class:`ResultsDecodeError` if not JSON)."""
    try:
        with gc_paused():
            return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsDecodeError(f"it is not valid JSON ({exc})") from exc


def loads(text: str, *, transcripts: bool = True) -> RunResults:
    """A :class:`RunResults` from the text of a results file (see :func:`from_data`).

    Each attempt becomes its record as soon as it is decoded (see :func:`read_file`). The run
    is the one ``from_data(parse(text))`` gives; text that does not decode is read that way,
    for its error message.
    """
    run = _read_incrementally(lambda *on: decode_text(text, *on), transcripts)
    return run if run is not None else from_data(parse(text), transcripts=transcripts)


def read_file(path: Path, *, transcripts: bool = True, digest: Any = None) -> RunResults | None:
    """The run in the results file at ``path``, or ``None`` when it cannot be read this way
    (missing, unreadable, not UTF-8, not JSON, not a run: the caller reads it the plain way,
    ``from_data(parse(text))``, which says what is wrong).

    The file is read a piece at a time and each attempt becomes its record as soon as it is
    decoded (:mod:`caliper.results.incremental`), so neither the whole text nor the decoded
    dicts of all attempts are ever held at once (a 50,000-attempt file: 55 MB of text and
    ~190 MB of dicts); equal strings that every attempt repeats (task names, models, check
    keys and reasons, roles) are kept once per read. The run is the one the plain read gives.

    ``digest`` (a :mod:`hashlib` object), when given, is updated with every byte of the file
    as it is read, so it hashes exactly the bytes the run was decoded from.
    """
    try:
        with open(path, "rb") as raw:
            buffered = raw if digest is None else io.BufferedReader(_Hashing(raw, digest))
            with io.TextIOWrapper(buffered, encoding="utf-8") as file:
                run = _read_incrementally(lambda *on: decode_run(file.read, *on), transcripts)
                while run is not None and digest is not None and file.read(CHUNK_BYTES):
                    pass  # the rest (whitespace) is hashed too
                return run
    except (OSError, UnicodeDecodeError):
        return None


CHUNK_BYTES = 1 << 16


class _Hashing(io.RawIOBase):
    """A binary file's reader that adds every byte read to ``digest``."""

    def __init__(self, raw: Any, digest: Any) -> None:
        super().__init__()
        self.raw = raw
        self.digest = digest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        count = self.raw.readinto(buffer)
        self.digest.update(memoryview(buffer)[:count])
        return count


def _read_incrementally(decode: Decode, transcripts: bool) -> RunResults | None:
    """The run ``decode`` gives (see :func:`_decode_incrementally`), ``None`` if not one."""
    with gc_paused():
        try:
            return _decode_incrementally(decode, transcripts=transcripts)
        except (cattrs.BaseValidationError, ValueError, TypeError, KeyError, AttributeError):
            return None  # not a well-formed run: the plain read says what is wrong with it


def _decode_incrementally(decode: Decode, *, transcripts: bool) -> RunResults:
    conv = _reading_converter()
    structure_task = conv.get_structure_hook(TaskResult)
    structure_attempt = _attempt_structuring(_SharedStrings())

    def record(attempt: dict[str, Any]) -> AttemptRecord:
        if transcripts:
            compact.expand_attempt(attempt)
        else:
            attempt.pop(compact.FINAL_ANSWER_TURN, None)
            attempt["transcript"] = None
        return structure_attempt(attempt)

    def task(task: dict[str, Any]) -> TaskResult:
        held = task.pop("attempts", [])
        if not (type(held) is list and all(type(a) is AttemptRecord for a in held)):
            raise ValueError("an attempt that is not an object")
        result = structure_task(task, TaskResult)
        result.attempts = held
        return result

    data = decode(record, task)
    _check_meta(data)
    tasks = data.get("tasks", [])
    if not (type(tasks) is list and all(type(t) is TaskResult for t in tasks)):
        raise ValueError("a task that is not an object")
    results = conv.structure({**data, "tasks": []}, RunResults)
    results.tasks = tasks
    return results


class _SharedStrings:
    """One object per distinct string of a read, for the fields a big run repeats in every
    attempt (task names, models, reasons, check keys and their details, roles, tool names):
    the JSON decoder makes a new string for each. The table lives as long as the read.
    Texts that may be long (reasons, errors, final answers) are shared only up to
    :attr:`LONGEST` characters: a long one is rarely repeated and not worth hashing."""

    LONGEST = 256

    def __init__(self) -> None:
        self.table: dict[str, str] = {}

    def attempt(self, attempt: dict[str, Any]) -> None:
        """Replace the repeated strings of one attempt's decoded dict, in place."""
        same = self.table.setdefault
        str_ = str
        for key in ("task_name", "model"):
            value = attempt.get(key)
            if type(value) is str_:
                attempt[key] = same(value, value)
        for key in ("reason", "error", "final_answer"):
            value = attempt.get(key)
            if type(value) is str_ and len(value) <= self.LONGEST:
                attempt[key] = same(value, value)
        for key in ("activated", "undeclared", "built_in"):
            names = attempt.get(key)
            if type(names) is list:
                attempt[key] = [same(n, n) if type(n) is str_ else n for n in names]
        checks = attempt.get("checks")
        for check in checks if type(checks) is list else ():
            if type(check) is not dict:
                continue
            for key in ("key", "reason"):
                value = check.get(key)
                if type(value) is str_ and len(value) <= self.LONGEST:
                    check[key] = same(value, value)
            details = check.get("details")
            if type(details) is dict:
                check["details"] = {
                    same(k, k): (
                        same(v, v)
                        if type(v) is str_
                        else [same(n, n) if type(n) is str_ else n for n in v]
                        if type(v) is list
                        else v
                    )
                    for k, v in details.items()
                }
        turns = attempt.get("transcript")
        for turn in turns if type(turns) is list else ():
            if type(turn) is dict:
                for key in ("role", "tool_name"):
                    value = turn.get(key)
                    if type(value) is str_:
                        turn[key] = same(value, value)


def newer_schema(results: RunResults) -> bool:
    """True when the file was written by a newer caliper (fields it added were ignored)."""
    return results.meta.schema_version > SCHEMA_VERSION


def _describe(exc: BaseException) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        notes = cattrs.transform_error(exc, path="results")
        return "; ".join(notes[:3]) or str(exc)
    return f"{type(exc).__name__}: {exc}"
