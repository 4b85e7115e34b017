"""Problems found in a spec, and the error that carries them to the user."""

from __future__ import annotations

from pathlib import Path

from caliper.errors import SpecError
from caliper.system import attrs_classes


@attrs_classes.frozen
class Problem:
    """One thing wrong with a spec (or a file it points at).

    ``file`` is the file the problem is in (the spec, a ``SKILL.md``, an assert script);
    ``line`` and ``column`` are 1-based, or ``None`` when the problem has no position (a missing
    file). ``field`` is the path of the offending value, e.g. ``tasks[2].activates[0]``.
    """

    file: Path
    line: int | None
    column: int | None
    field: str
    message: str

    def location(self) -> str:
        """``file:line:column`` (as much of it as is known)."""
        where = str(self.file)
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return where

    def render(self) -> str:
        """The problem on one line (continuation lines indented), as ``validate`` prints it."""
        head = f"{self.location()}: "
        if self.field:
            head += f"{self.field}: "
        return head + self.message.replace("\n", "\n    ")

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict (``validate --format json``)."""
        return {
            "file": str(self.file),
            "line": self.line,
            "column": self.column,
            "field": self.field,
            "message": self.message,
        }


def sort_key(problem: Problem) -> tuple[str, int, int]:
    """Order problems by file, then position (positionless ones first)."""
    return (str(problem.file), problem.line or 0, problem.column or 0)


class SpecInvalid(SpecError):
    """A spec has one or more problems; ``problems`` lists every one of them."""

    def __init__(self, problems: list[Problem], *, hint: str | None = None):
        self.problems = sorted(problems, key=sort_key)
        count = len(self.problems)
        first = self.problems[0].file if self.problems else "spec"
        noun = "problem" if count == 1 else "problems"
        lines = [f"{first}: {count} {noun}:"]
        lines += [f"  {p.render()}" for p in self.problems]
        super().__init__(
            "\n".join(lines),
            hint=hint or "Fix the spec and check it with `caliper validate SPEC`.",
        )
