"""Small helpers shared by the spec section checkers: problems at a path, typos, type names."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from caliper.spec.problems import Problem
from caliper.spec.yamldoc import Document, PathKey, format_path


def type_name(value: Any) -> str:
    """How a YAML value is described in messages (``a list``, ``a number``, ``nothing``)."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


def did_you_mean(word: object, candidates: Iterable[str]) -> str:
    """`` Did you mean 'x'?`` for a near miss among ``candidates``, else an empty string."""
    if not isinstance(word, str):
        return ""
    import difflib  # only when a name is wrong

    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    if not close:
        lowered = {c.lower(): c for c in candidates}
        if word.lower() in lowered:
            close = [lowered[word.lower()]]
    return f" Did you mean {close[0]!r}?" if close else ""


class Reporter:
    """Collects problems and warnings for one document, placing each at its line and column."""

    def __init__(self, document: Document):
        self.document = document
        self.problems: list[Problem] = []
        self.warnings: list[Problem] = []

    def _make(self, path: PathKey, message: str, key: bool) -> Problem:
        position = self.document.position(path, key=key)
        line, column = position if position is not None else (None, None)
        return Problem(self.document.path, line, column, format_path(path), message)

    def error(self, path: PathKey, message: str, *, key: bool = False) -> None:
        """Record a problem with the value at ``path`` (or with its key when ``key``)."""
        self.problems.append(self._make(path, message, key))

    def warn(self, path: PathKey, message: str, *, key: bool = False) -> None:
        """Record something suspicious that does not make the spec invalid."""
        self.warnings.append(self._make(path, message, key))

    def unknown_keys(
        self,
        path: PathKey,
        mapping: dict[Any, Any],
        allowed: Iterable[str],
        *,
        what: str,
        extra_hints: dict[str, str] | None = None,
    ) -> None:
        """Report every key of ``mapping`` not in ``allowed`` (with "did you mean")."""
        allowed = list(allowed)
        for key in mapping:
            if key in allowed:
                continue
            if extra_hints and key in extra_hints:
                self.error((*path, key), extra_hints[key], key=True)
                continue
            shown = ", ".join(allowed)
            self.error(
                (*path, key),
                f"unknown key {key!r} in {what}.{did_you_mean(key, allowed)} "
                f"Expected one of: {shown}.",
                key=True,
            )

    def string(
        self,
        path: PathKey,
        value: Any,
        *,
        what: str,
        required: bool = True,
        allow_empty: bool = False,
    ) -> str | None:
        """``value`` if it is a (non-blank) string; otherwise record why not and return None."""
        if value is None and not required:
            return None
        if not isinstance(value, str):
            self.error(path, f"expected {what} (a string), found {type_name(value)}")
            return None
        if not allow_empty and not value.strip():
            self.error(path, f"expected {what}, found an empty string")
            return None
        return value

    def string_list(self, path: PathKey, value: Any, *, what: str) -> list[str] | None:
        """``value`` if it is a list of non-blank strings (``None`` counts as empty)."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.error(path, f"expected a list of {what}, found {type_name(value)}")
            return None
        items: list[str] = []
        ok = True
        for index, item in enumerate(value):
            text = self.string((*path, index), item, what=what)
            if text is None:
                ok = False
            else:
                items.append(text)
        return items if ok else None
