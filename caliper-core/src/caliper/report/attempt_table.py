"""The attempt table of one run as CSV or JSON Lines: one row per attempt, for spreadsheets
and scripts (``caliper report RUN --format csv|jsonl``; the run page's export buttons build
the same rows in the browser, in the same column order and number format).

CSV quotes a field holding ``,``, ``"``, a carriage return or a newline (doubling inner
quotes) and ends rows with ``\\n``; a text field that a spreadsheet would read as a formula
(first character ``=``, ``+``, ``-``, ``@``, tab or carriage return) is prefixed with ``'``.
JSON Lines keeps every value exactly as saved.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from caliper.report.run_view import attempt_verdict
from caliper.results.models import AttemptRecord, Outcome, RunResults

COLUMNS = (
    "task",
    "attempt",
    "outcome",
    "kind",
    "verdict",
    "duration_seconds",
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "activated",
    "expected",
    "final_answer",
)
"""The table's columns, in order (``kind``: pass / failed / unusable / unchecked under the
run's ``timeouts`` policy; ``activated`` and ``expected`` are skill-name lists or null)."""

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def attempt_kind(outcome: Outcome, timeouts: str) -> str:
    """``pass``, ``failed`` (counted against the task), ``unusable`` (left out of the rates
    under the run's ``timeouts`` policy) or ``unchecked``: what the failures view sorts on."""
    if outcome is Outcome.PASS:
        return "pass"
    if outcome.left_out(timeouts):
        return "unusable"
    if outcome.scored(timeouts):
        return "failed"
    return "unchecked"


def attempt_row(task: str, record: AttemptRecord, timeouts: str, expected: Any) -> dict:
    """One attempt as a row of :data:`COLUMNS`."""
    usage = record.usage
    return {
        "task": task,
        "attempt": record.attempt,
        "outcome": record.outcome.value,
        "kind": attempt_kind(record.outcome, timeouts),
        "verdict": attempt_verdict(record)[2],
        "duration_seconds": record.duration_seconds,
        "input_tokens": usage.input_tokens if usage else None,
        "output_tokens": usage.output_tokens if usage else None,
        "total_tokens": usage.total_tokens if usage else None,
        "activated": record.activated,
        "expected": expected,
        "final_answer": record.final_answer,
    }


def attempt_rows(results: RunResults) -> list[dict]:
    """Every attempt of ``results``, task by task in the run's order."""
    timeouts = results.meta.timeouts
    return [
        attempt_row(task.name, record, timeouts, task.activation_expected)
        for task in results.tasks
        for record in task.attempts
    ]


def _number(value: float) -> str:
    """A number as JavaScript's ``String()`` writes it for the values a run holds: an
    integral float without ``.0``, any other float in its shortest round-trip form."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return repr(value)


def csv_field(value: Any) -> str:
    """One CSV field: null as empty, a list as its items joined by spaces, numbers as
    :func:`_number`, text guarded against formulas and quoted when it must be."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return _number(value)
    text = " ".join(value) if isinstance(value, list) else str(value)
    if text.startswith(FORMULA_STARTS):
        text = "'" + text
    if any(c in text for c in ',"\r\n'):
        text = '"' + text.replace('"', '""') + '"'
    return text


def to_csv(rows: Iterable[dict]) -> str:
    """The rows as CSV text with a header line."""
    lines = [",".join(COLUMNS)]
    lines.extend(",".join(csv_field(row[c]) for c in COLUMNS) for row in rows)
    return "\n".join(lines) + "\n"


def _json_value(value: Any) -> Any:
    """An integral float as an int (``4`` not ``4.0``: the same JSON number, written the way
    the page's ``JSON.stringify`` writes it); anything else unchanged."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def to_jsonl(rows: Iterable[dict]) -> str:
    """The rows as JSON Lines (one compact object per line, keys in :data:`COLUMNS` order)."""
    return "".join(
        json.dumps(
            {c: _json_value(row[c]) for c in COLUMNS}, ensure_ascii=False, separators=(",", ":")
        )
        + "\n"
        for row in rows
    )
