"""Read a YAML file into plain Python values plus the position of every key and value.

PyYAML's ``SafeLoader`` builds the node tree; we construct values ourselves so that each one
can be traced back to its line and column, and so that a key written twice in one mapping is
reported instead of silently keeping the last value. Nothing here raises for bad input: every
failure becomes a :class:`~caliper.spec.problems.Problem`.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import attrs

from caliper.spec.problems import Problem
from caliper.spec.pyyaml import yaml
from caliper.system import attrs_classes
from caliper.system.textsafe import well_formed

PathKey = tuple[Any, ...]
"""A value's path from the document root: mapping keys and sequence indexes."""

Position = tuple[int, int]
"""A 1-based (line, column)."""

MERGE_TAG = "tag:yaml.org,2002:merge"
MAX_DEPTH = 64
MAX_ALIAS_VALUES = 100_000
"""How many values aliases may expand to in all (an "alias bomb" guard; plain values are
bounded by the file size instead)."""
MAX_FILE_BYTES = 8 * 1024 * 1024
"""The largest spec (or SKILL.md) read: 8 MiB, far above any real one."""
BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte-order mark some Windows editors put first."""
FAST_PARSE_BYTES = 256 * 1024
"""Texts larger than this are parsed with libyaml (when PyYAML has it): same values and
positions, ~15x faster, slightly different wording of syntax errors."""


@attrs_classes.frozen
class Document:
    """A parsed YAML file: its data and where each value (and each mapping key) starts."""

    path: Path
    data: Any
    values: dict[PathKey, Position]
    keys: dict[PathKey, Position]
    sha256: str = ""
    """SHA-256 of the bytes the text was decoded from (set by :func:`load_document`)."""

    def position(self, path: PathKey, *, key: bool = False) -> Position | None:
        """Where the value at ``path`` starts (its key when ``key``), or the nearest parent."""
        table = self.keys if key else self.values
        if path in table:
            return table[path]
        while path:
            path = path[:-1]
            if path in self.values:
                return self.values[path]
        return None


def format_path(path: PathKey) -> str:
    """``("tasks", 2, "activates", 0)`` → ``tasks[2].activates[0]``."""
    out = ""
    for part in path:
        if isinstance(part, int) and not isinstance(part, bool):
            out += f"[{part}]"
        elif isinstance(part, str) and part and all(c.isalnum() or c in "_-" for c in part):
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return out


def _position(mark: Any) -> Position:
    return (mark.line + 1, mark.column + 1)


def _text_problem(
    path: Path, message: str, line: int | None = None, column: int | None = None
) -> Problem:
    return Problem(path, line, column, "", message)


def read_text(path: Path, *, what: str = "spec") -> tuple[str | None, list[Problem]]:
    """The file's text, or the problems that stop it from being read as UTF-8 text.

    Only a regular file of at most :data:`MAX_FILE_BYTES` is read: a FIFO would block
    forever and ``/dev/zero`` never ends, so anything else is refused without opening it.
    """
    raw, problem = _read_bytes(path, what)
    if raw is None:
        return None, [problem] if problem else []
    return decode_text(path, raw, what=what)


def decode_text(path: Path, raw: bytes, *, what: str = "spec") -> tuple[str | None, list[Problem]]:
    """``raw`` (the bytes of ``path``) as UTF-8 text, or why it is not a YAML text file."""
    if b"\x00" in raw:
        return None, [_text_problem(path, f"is a binary file, not a YAML {what}")]
    # one leading byte-order mark is dropped (as the "utf-8-sig" codec would), before decoding
    # so that a bad byte's position is counted in the text the user sees
    body = raw[len(BOM) :] if raw.startswith(BOM) else raw
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = body[: exc.start]
        line = before.count(b"\n") + 1
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        return None, [
            _text_problem(
                path,
                f"is not valid UTF-8 (byte 0x{body[exc.start]:02x}); save the file as UTF-8",
                line,
                column,
            )
        ]
    return text, []


def _not_a_file(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _read_bytes(path: Path, what: str) -> tuple[bytes | None, Problem | None]:
    """At most :data:`MAX_FILE_BYTES` of a regular file, or the problem that stops it."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None, _text_problem(path, f"no such file (the {what} was not found)")
    except OSError as exc:
        return None, _text_problem(path, f"cannot be read: {exc.strerror or exc}")
    if stat.S_ISDIR(mode):
        message = f"is a directory; expected a {what} file"
        if what == "spec":
            message += f" (to check every spec in it: caliper validate {path}/*.eval.yaml)"
        return None, _text_problem(path, message)
    if not stat.S_ISREG(mode):
        return None, _text_problem(
            path,
            f"is {_not_a_file(mode)}, not a regular file; save the {what} to a file and "
            "name that file",
        )
    try:
        # O_NONBLOCK: should the path turn into a FIFO after the check, open() still returns
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        return None, _text_problem(path, f"cannot be read: {exc.strerror or exc}")
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, _text_problem(path, f"is not a regular file; name a {what} file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        if exc.errno == errno.EISDIR:
            return None, _text_problem(path, f"is a directory; expected a {what} file")
        return None, _text_problem(path, f"cannot be read: {exc.strerror or exc}")
    finally:
        os.close(fd)
    if len(raw) > MAX_FILE_BYTES:
        limit = MAX_FILE_BYTES // (1024 * 1024)
        return None, _text_problem(
            path,
            f"is larger than {limit} MiB, the most a {what} may be; split it into several "
            "specs (see docs/spec.md, Limits)",
        )
    return raw, None


def parse_yaml(path: Path, text: str) -> tuple[Document | None, list[Problem]]:
    """Parse one YAML document with positions. ``Document.data`` is ``None`` for an empty one."""
    try:
        loader = _loader_class(text)(text)
    except yaml.reader.ReaderError as exc:
        return None, [_reader_problem(path, text, exc)]
    try:
        try:
            node = loader.get_single_node()
        except yaml.reader.ReaderError as exc:  # libyaml reads lazily, so it raises it here
            return None, [_reader_problem(path, text, exc)]
        except yaml.YAMLError as exc:
            return None, [_yaml_problem(path, exc)]
        except RecursionError:
            return None, [_text_problem(path, "the YAML is nested too deeply to read")]
        builder = _Builder(loader, path)
        if node is None:
            return Document(path, None, {}, {}), []
        try:
            data = builder.build(node, ())
        except yaml.YAMLError as exc:
            return None, [*builder.problems, _yaml_problem(path, exc)]
        except RecursionError:
            return None, [_text_problem(path, "the YAML is nested too deeply to read")]
        return Document(path, data, builder.values, builder.keys), builder.problems
    finally:
        loader.dispose()


def _loader_class(text: str) -> type:
    """libyaml's loader for big texts when PyYAML has it, else the pure-Python one."""
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None and len(text) > FAST_PARSE_BYTES:
        return fast
    return yaml.SafeLoader


def _yaml_problem(path: Path, exc: yaml.YAMLError) -> Problem:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    if problem:
        message = f"invalid YAML: {problem}"
        if context:
            message += f" ({context})"
    else:
        message = f"invalid YAML: {exc}"
    if context and "single document" in context:
        message = "the file holds several YAML documents (`---`); a spec is one document"
    opened = getattr(exc, "context_mark", None)
    if context and "quoted scalar" in context and "end of stream" in (problem or "") and opened:
        # The scanner only notices at the end of the file; the mistake is where it opened.
        mark = opened
        message = (
            "invalid YAML: this quoted string is never closed (the closing quote is missing, "
            "so the rest of the file was read as part of it)"
        )
    line, column = _position(mark) if mark is not None else (None, None)
    return _text_problem(path, message, line, column)


def _reader_problem(path: Path, text: str, exc: yaml.reader.ReaderError) -> Problem:
    before = text[: exc.position]
    line = before.count("\n") + 1
    column = exc.position - (before.rfind("\n") + 1) + 1
    char = exc.character if isinstance(exc.character, str) else chr(exc.character)
    return _text_problem(
        path, f"YAML does not allow the control character U+{ord(char):04X} here", line, column
    )


class _Builder:
    """Constructs Python values from nodes, recording positions and duplicate keys."""

    def __init__(self, loader: yaml.SafeLoader, path: Path):
        self.loader = loader
        self.path = path
        self.values: dict[PathKey, Position] = {}
        self.keys: dict[PathKey, Position] = {}
        self.problems: list[Problem] = []
        self.active: set[int] = set()
        self.built: set[int] = set()
        self.alias_depth = 0
        self.alias_budget = MAX_ALIAS_VALUES

    def build(self, node: yaml.Node, path: PathKey) -> Any:
        if id(node) in self.active:
            raise yaml.constructor.ConstructorError(
                None, None, "an alias refers to a value that contains it", node.start_mark
            )
        if len(path) > MAX_DEPTH:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"values are nested more than {MAX_DEPTH} levels deep",
                node.start_mark,
            )
        # A node built before is reached again through an alias: everything built under it
        # is an alias expansion, and only those count against the alias budget.
        again = id(node) in self.built
        self.built.add(id(node))
        self.alias_depth += again
        self.active.add(id(node))
        try:
            if self.alias_depth:
                self.alias_budget -= 1
                if self.alias_budget < 0:
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"aliases expand to more than {MAX_ALIAS_VALUES} values (too many "
                        "aliases?)",
                        node.start_mark,
                    )
            return self._build(node, path)
        finally:
            self.active.discard(id(node))
            self.alias_depth -= again

    def _build(self, node: yaml.Node, path: PathKey) -> Any:
        self.values.setdefault(path, _position(node.start_mark))
        if isinstance(node, yaml.MappingNode):
            self._plain_tag(node, "map")
            return self._mapping(node, path)
        if isinstance(node, yaml.SequenceNode):
            self._plain_tag(node, "seq")
            return [self.build(item, (*path, i)) for i, item in enumerate(node.value)]
        return _clean(self.loader.construct_object(node, deep=True))

    def _plain_tag(self, node: yaml.Node, kind: str) -> None:
        if node.tag != f"tag:yaml.org,2002:{kind}":
            raise yaml.constructor.ConstructorError(
                None, None, f"unsupported YAML tag {node.tag!r}", node.start_mark
            )

    def _mapping(self, node: yaml.MappingNode, path: PathKey) -> dict[Any, Any]:
        explicit = {id(k) for k, _ in node.value if k.tag != MERGE_TAG}
        self.loader.flatten_mapping(node)
        result: dict[Any, Any] = {}
        first_seen: dict[Any, tuple[Position, bool]] = {}
        for key_node, value_node in node.value:
            key = _clean(self.loader.construct_object(key_node, deep=True))
            where = _position(key_node.start_mark)
            if not isinstance(key, Hashable) or isinstance(key, (list, dict)):
                self.problems.append(
                    Problem(
                        self.path,
                        *where,
                        format_path(path),
                        "a mapping key must be a plain value, not a list or mapping",
                    )
                )
                continue
            from_merge = id(key_node) not in explicit
            if key in first_seen:
                earlier, earlier_from_merge = first_seen[key]
                if not earlier_from_merge and not from_merge:
                    self.problems.append(
                        Problem(
                            self.path,
                            *where,
                            format_path((*path, key)),
                            f"duplicate key {key!r} (first written at line {earlier[0]}); "
                            "YAML would silently keep only one of them",
                        )
                    )
                    continue
            first_seen[key] = (where, from_merge)
            self.keys[(*path, key)] = where
            self.values.pop((*path, key), None)
            result[key] = self.build(value_node, (*path, key))
        return result


def _clean(value: Any) -> Any:
    """A scalar as stored: a string's lone surrogates (a ``"\\ud800"`` escape) become U+FFFD,
    so a task name or prompt can always be sent to an agent and saved as UTF-8."""
    return well_formed(value) if isinstance(value, str) else value


def load_document(
    path: Path, *, what: str = "spec", hashed: bool = True
) -> tuple[Document | None, list[Problem]]:
    """Read and parse ``path``; problems explain anything that stopped it. ``hashed=False``
    leaves :attr:`Document.sha256` empty (``caliper validate`` shows no hash, and importing
    ``hashlib`` costs it milliseconds)."""
    raw, problem = _read_bytes(path, what)
    if raw is None:
        return None, [problem] if problem else []
    text, problems = decode_text(path, raw, what=what)
    if text is None:
        return None, problems
    document, problems = parse_yaml(path, text)
    if document is None:
        return None, problems
    if not hashed:
        return document, problems
    import hashlib

    return attrs.evolve(document, sha256=hashlib.sha256(raw).hexdigest()), problems
