"""A saved run's records without transcripts, kept beside the run for reading commands.

``report`` (text, markdown, json without turns), ``compare`` and ``list`` read a run without
its transcripts (:func:`caliper.results.store.load_run` with ``transcripts=False``). Decoding
the results file for that builds every attempt from its JSON object: most of those commands'
time on a big run. The first such read saves what it built in a hidden sidecar,
``.<run file name>.records``, and later reads build the same records from it instead.

The sidecar holds each record as a list of its fields' values in field order (no keys;
enums as their values; nested records as lists): a JSON header line, then one pickle per
task of that task's list. Pickle is used for plain data only (lists, dicts, strings,
numbers, booleans, ``None``), and keeps each value's type. A sidecar is read with an unpickler
that refuses every global (:class:`_DataUnpickler`), so no class or function can be named in
one: a planted sidecar can hold data, never code, and anything else in it makes the read
ignore it.

The header holds the SHA-256 of the results file's bytes the records were decoded from
(hashed as they were read, so they are exactly those bytes) and the layout of the record
classes. A read hashes the results file as it is now; any difference in content (a regrade,
review, resume or hand edit rewrote it), in layout (another caliper version) or in the
sidecar's own shape makes the read ignore the sidecar and decode the file. So a sidecar can
only ever give the records the file itself gives.
"""

from __future__ import annotations

import enum
import functools
import hashlib
import json
import pickle
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import attrs

from caliper.results.models import AttemptRecord, CheckRecord, RunResults
from caliper.system import attrs_classes
from caliper.system.output_file import OutputWriteError, write_output

CACHE_VERSION = 2
PICKLE_PROTOCOL = 5
HASH_CHUNK = 1 << 20
"""Bytes hashed at a time (the file is never held whole)."""
_PLAIN = (str, int, float, bool, type(None), typing.Any)
_LEFT_OUT = {(AttemptRecord, "transcript")}
"""Fields not kept: always ``None`` in a read without transcripts."""
_SHARED = {
    *((AttemptRecord, name) for name in ("task_name", "model", "reason", "error")),
    *((CheckRecord, name) for name in ("key", "reason", "backend", "model", "prompt_version")),
}
"""Text fields most attempts repeat: one string object per distinct value of a read, as the
decode of the run file shares them (memory only; the values are the same)."""
_strings: dict[str, str] = {}
"""The shared strings of the read in progress (emptied after it)."""


class CacheLayoutError(TypeError):
    """A record field of a type the sidecar cannot hold (a model change this module lacks)."""


def records_path(run_path: Path) -> Path:
    """The sidecar that holds ``run_path``'s records."""
    return run_path.with_name(f".{run_path.name}.records")


def file_digest(path: Path) -> str | None:
    """The SHA-256 (hex) of the file's bytes, or ``None`` if it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as file:
            while chunk := file.read(HASH_CHUNK):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def _is_plain(tp: Any) -> bool:
    """Whether values of ``tp`` are JSON values kept as they are (no record, no enum)."""
    if tp in _PLAIN:
        return True
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (list, dict, typing.Union, types.UnionType):
        return all(_is_plain(arg) for arg in args)
    return False


def _optional_inner(tp: Any) -> Any | None:
    """``X`` of ``X | None``, else ``None``."""
    args = typing.get_args(tp)
    union = typing.get_origin(tp) in (typing.Union, types.UnionType)
    if union and len(args) == 2 and type(None) in args:
        return next(arg for arg in args if arg is not type(None))
    return None


class _Codec:
    """Generated functions turning each record class into a JSON list and back."""

    def __init__(self) -> None:
        self.names: dict[str, Any] = {}
        self.made: dict[type, tuple[str, str]] = {}
        self.layout: list[str] = []

    def bind(self, value: Any, prefix: str) -> str:
        name = f"{prefix}{len(self.names)}"
        self.names[name] = value
        return name

    def value(self, tp: Any, expr: str) -> tuple[str, str]:
        """(encoding, decoding) expressions of a value ``expr`` of type ``tp``."""
        if _is_plain(tp):
            return expr, expr
        inner = _optional_inner(tp)
        if inner is not None:
            enc, dec = self.value(inner, expr)
            return (
                f"(None if {expr} is None else {enc})",
                f"(None if {expr} is None else {dec})",
            )
        if typing.get_origin(tp) is list and len(typing.get_args(tp)) == 1:
            item = f"i{len(self.names)}"
            self.names[item] = None  # keeps the loop names apart
            enc, dec = self.value(typing.get_args(tp)[0], item)
            return f"[{enc} for {item} in {expr}]", f"[{dec} for {item} in {expr}]"
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            members = self.bind({member.value: member for member in tp}, "E")
            self.layout.append(f"{tp.__qualname__}:{','.join(str(m.value) for m in tp)}")
            return f"{expr}.value", f"{members}[{expr}]"
        if isinstance(tp, type) and attrs.has(tp):
            enc, dec = self.record(tp)
            return f"{enc}({expr})", f"{dec}({expr})"
        raise CacheLayoutError(f"no sidecar form for {tp!r}")

    def record(self, cls: type) -> tuple[str, str]:
        """The names of the functions encoding and decoding one ``cls``."""
        if cls in self.made:
            return self.made[cls]
        enc_name, dec_name = f"enc_{cls.__name__}", f"dec_{cls.__name__}"
        self.made[cls] = (enc_name, dec_name)
        attrs.resolve_types(cls)
        kept = [f for f in attrs.fields(cls) if (cls, f.name) not in _LEFT_OUT]
        self.layout.append(f"{cls.__qualname__}:{','.join(f'{f.name}={f.type}' for f in kept)}")
        encoded, decoded, position = [], [], 0
        for field in attrs.fields(cls):
            if (cls, field.name) in _LEFT_OUT:
                decoded.append("None")
                continue
            enc, _ = self.value(field.type, f"o.{field.name}")
            _, dec = self.value(field.type, f"t[{position}]")
            if (cls, field.name) in _SHARED:
                self.names["same"] = _strings.setdefault
                dec = f"(None if {dec} is None else same({dec}, {dec}))"
            encoded.append(enc)
            decoded.append(dec)
            position += 1
        self.names[cls.__name__] = cls
        source = (
            f"def {enc_name}(o):\n    return [{', '.join(encoded)}]\n"
            f"def {dec_name}(t):\n    return {cls.__name__}({', '.join(decoded)})\n"
        )
        exec(compile(source, f"<records sidecar {cls.__name__}>", "exec"), self.names)
        return enc_name, dec_name

    def function(self, name: str) -> Callable[[Any], Any]:
        return self.names[name]


@attrs_classes.frozen
class _Functions:
    layout: str
    encode_meta: Callable[[Any], Any]
    decode_meta: Callable[[Any], Any]
    encode_task: Callable[[Any], Any]
    decode_task: Callable[[Any], Any]


@functools.cache
def _functions() -> _Functions:
    """The encoders and decoders of a run's meta and tasks (made once)."""
    codec = _Codec()
    attrs.resolve_types(RunResults)
    meta_enc, meta_dec = codec.record(attrs.fields(RunResults).meta.type)
    task_enc, task_dec = codec.record(_task_class())
    return _Functions(
        layout="|".join(codec.layout),
        encode_meta=codec.function(meta_enc),
        decode_meta=codec.function(meta_dec),
        encode_task=codec.function(task_enc),
        decode_task=codec.function(task_dec),
    )


def _task_class() -> type:
    attrs.resolve_types(RunResults)
    (task_cls,) = typing.get_args(attrs.fields(RunResults).tasks.type)
    return task_cls


def encode(results: RunResults, digest: str) -> Iterator[bytes]:
    """The sidecar of ``results`` (read without transcripts from a file whose bytes hash to
    ``digest``), a piece at a time: the header line, then each task's pickle."""
    made = _functions()
    header = {
        "version": CACHE_VERSION,
        "sha256": digest,
        "layout": made.layout,
        "tasks": len(results.tasks),
        "meta": made.encode_meta(results.meta),
    }
    yield (json.dumps(header) + "\n").encode("utf-8")
    dumps, encode_task = pickle.dumps, made.encode_task
    for task in results.tasks:
        yield dumps(encode_task(task), PICKLE_PROTOCOL)


class _DataUnpickler(pickle.Unpickler):
    """Reads pickles of plain data only: naming any class or function (the only way a
    pickle can reach code) is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"a records sidecar names {module}.{name}")


def decode(file: BinaryIO, digest: str) -> RunResults | None:
    """The run the sidecar open as ``file`` holds, or ``None`` when it was not written for a
    file whose bytes hash to ``digest`` by this layout, or is not a whole sidecar (any
    failure to read it: it is a cache)."""
    made = _functions()
    try:
        header = json.loads(file.readline())
        if not isinstance(header, dict) or [
            header.get("version"),
            header.get("sha256"),
            header.get("layout"),
        ] != [CACHE_VERSION, digest, made.layout]:
            return None
        count = header.get("tasks")
        if type(count) is not int:
            return None
        meta = made.decode_meta(header["meta"])
        # an unpickler per task: each pickle numbers its shared values from 0
        tasks = [made.decode_task(_DataUnpickler(file).load()) for _ in range(count)]
        if file.read(1):
            return None  # more than the header said: not this sidecar
    except Exception:  # any failure to read a cache: the file is decoded instead
        return None
    finally:
        _strings.clear()
    return RunResults(meta=meta, tasks=tasks)


def read_records(run_path: Path) -> RunResults | None:
    """The run at ``run_path`` without transcripts, from its sidecar; ``None`` when there is
    no sidecar for the file's present content (or it cannot be read)."""
    try:
        with open(records_path(run_path), "rb") as file:
            digest = file_digest(run_path)
            return None if digest is None else decode(file, digest)
    except (OSError, CacheLayoutError):
        return None


def write_records(run_path: Path, results: RunResults, digest: str) -> None:
    """Save ``results`` (decoded without transcripts from ``run_path``'s bytes hashing to
    ``digest``) as its sidecar, through the one output writer (a piece at a time into a
    temporary file renamed over it, as the run file itself was written).
    Best effort: a sidecar not written is made by a later read. Not flushed to disk (a
    cache): a sidecar cut short by a machine crash is never read as whole (see
    :func:`decode`)."""
    try:
        write_output(
            records_path(run_path), encode(results, digest), make_parents=False, durable=False
        )
    except (OutputWriteError, OSError, CacheLayoutError, TypeError, ValueError):
        return  # the writer leaves no temporary file; the next read makes the sidecar
