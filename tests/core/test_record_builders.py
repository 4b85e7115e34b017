"""The generated record builders of the incremental read (issue 34, a run's first read).

Whatever a builder returns must be the record the reading converter (and so the plain read,
``json.loads`` + ``codec.from_data``) builds from the same dict; whatever it cannot build the
same way it must refuse, leaving the dict unchanged for the converter."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from caliper.results import codec
from caliper.results.models import AttemptRecord, Outcome
from caliper.results.record_builders import builder

STORED = Path(__file__).parent / "stored" / "judged-run-before-typed-judge-fields.json"

FULL = {
    "task_name": "t",
    "attempt": 3,
    "outcome": "task_fail",
    "reason": "the check failed",
    "duration_seconds": 1.25,
    "usage": {
        "input_tokens": 300,
        "output_tokens": 60,
        "cache_read_tokens": 5,
        "cache_creation_tokens": None,
        "cost_usd": 0.01,
    },
    "final_answer": "HELLO",
    "transcript": [
        {"role": "assistant", "content": "hi"},
        {"role": "tool", "tool_name": "Bash", "tool_input": {"cmd": ["ls", 1]}, "is_error": 0},
    ],
    "activated": ["shout"],
    "activation_passed": True,
    "checks": [
        {
            "key": "expect",
            "passed": False,
            "reason": "not loud",
            "error": None,
            "details": {
                "judge_backend": "claude-code",
                "judge_model": "m",
                "prompt_version": "expect-v1",
                "judge_usage": {"input_tokens": 410, "output_tokens": 35, "cost_usd": 0.0012},
                "votes": ["no", "no"],
            },
        },
        {"key": "assert", "passed": True, "details": {"stdout": "", "stderr": ""}},
        {"key": "mine", "passed": None, "details": {"judge_usage": "my own value"}},
        {"key": "typed", "passed": 1, "usage": {"input_tokens": 1}, "backend": "b"},
        {"key": "bare", "passed": True},
    ],
    "model": "claude-sonnet-4-5",
    "error": "E" * 300,  # longer than the texts shared
    "setup_failed": True,
    "forbidden_reads": ["/etc/passwd"],
    "undeclared": ["other"],
    "history": "h",
    "history_sha256": "abc",
    "built_in": ["Bash"],
    "user_setup": {"skills": ["s"], "mcp": []},
    "retry_after": 30,
    "workdir_archive": "w.tar.gz",
    "workdir_note": "kept",
    "tries": [
        {
            "outcome": "infra_error",
            "reason": "rate limited",
            "duration_seconds": 2,
            "usage": {"input_tokens": 1, "output_tokens": 0},
            "model": "m",
            "retry_after": 10.0,
            "waited_seconds": 10,
            "run_id": "r",
        },
        {"outcome": "timeout"},
    ],
    "started_at": "2026-12-07T12:37:08.095+00:00",
    "a_key_from_a_newer_caliper": {"x": 1},
}

ATTEMPTS = {
    "every field": FULL,
    "required fields only": {"task_name": "t", "attempt": 1, "outcome": "pass"},
    "nulls everywhere optional": {
        **{key: None for key in FULL if key not in ("checks", "tries")},
        "task_name": "t",
        "attempt": 1,
        "outcome": "infra_error",
        "setup_failed": False,
        "forbidden_reads": [],
        "undeclared": [],
        "built_in": [],
    },
    "values of another JSON type": {
        "task_name": 12,
        "attempt": "2",
        "outcome": "timeout",
        "reason": 3.5,
        "duration_seconds": 4,
        "usage": {"input_tokens": "10", "output_tokens": 2.0, "cost_usd": 1},
        "activated": ["a", 5],
        "activation_passed": 0,
        "setup_failed": 1,
        "checks": [{"key": 7, "passed": "yes", "details": {"judge_model": 7}}],
    },
    "a null required field": {"task_name": None, "attempt": 1, "outcome": "pass"},
}


def _reading(data: dict) -> AttemptRecord:
    conv = codec._reading_converter()
    return conv.get_structure_hook(AttemptRecord)(copy.deepcopy(data), AttemptRecord)


def _built(data: dict) -> AttemptRecord:
    conv = codec._reading_converter()
    build = builder(conv, AttemptRecord, codec._stored_check, {}.setdefault)
    assert build is not None
    return build(data)


@pytest.mark.parametrize("name", list(ATTEMPTS))
def test_a_built_record_is_the_converters(name):
    data = ATTEMPTS[name]
    kept = copy.deepcopy(data)
    built = _built(data)
    assert built == _reading(data)
    assert built == codec.converter().structure(
        codec._stored_check(copy.deepcopy(data)), type(built)
    )
    assert data == kept  # the dict is read, not changed


def test_every_kind_of_field_is_set_from_the_dict():
    """The full attempt sets every field to a value other than its default (so a builder that
    dropped one would differ), and the judge fields come out of the check's details."""
    import attrs

    built = _built(FULL)
    default = AttemptRecord(task_name="t", attempt=3, outcome=Outcome.TASK_FAIL)
    for field in attrs.fields(AttemptRecord):
        if field.name not in ("task_name", "attempt", "outcome"):
            assert getattr(built, field.name) != getattr(default, field.name), field.name
    judged, _, mine, typed, _ = built.checks
    assert (judged.backend, judged.model, judged.prompt_version) == (
        "claude-code",
        "m",
        "expect-v1",
    )
    assert judged.usage.cost_usd == 0.0012 and judged.details == {"votes": ["no", "no"]}
    assert mine.usage is None and mine.details == {}
    assert typed.usage.input_tokens == 1 and typed.backend == "b" and typed.passed is True
    assert built.tries[0].outcome is Outcome.INFRA_ERROR and built.tries[0].waited_seconds == 10.0


@pytest.mark.parametrize(
    "odd",
    [
        {"task_name": "t", "attempt": 1},  # no outcome
        {"task_name": "t", "attempt": 1, "outcome": "no such outcome"},
        {"task_name": "t", "attempt": "one", "outcome": "pass"},
        {"task_name": "t", "attempt": 1, "outcome": "pass", "checks": {"key": "x"}},
        {"task_name": "t", "attempt": 1, "outcome": "pass", "checks": ["not a check"]},
        {"task_name": "t", "attempt": 1, "outcome": "pass", "usage": [1, 2]},
        {"task_name": "t", "attempt": 1, "outcome": "pass", "activated": "ab"},
        {"task_name": "t", "attempt": 1, "outcome": "pass", "tries": [{"reason": "x"}]},
    ],
)
def test_what_a_builder_refuses_is_left_unchanged_to_the_converter(odd):
    """A builder raises rather than guess; the incremental read then structures the same,
    unchanged dict with the converter: its record, or its error."""
    kept = copy.deepcopy(odd)
    with pytest.raises(Exception):  # noqa: B017 - any refusal
        _built(odd)
    assert odd == kept
    structure = codec._attempt_structuring(codec._SharedStrings())
    try:
        expected = _reading(odd)
    except Exception as exc:
        with pytest.raises(type(exc)):
            structure(copy.deepcopy(odd))
    else:
        assert structure(copy.deepcopy(odd)) == expected


def test_attempts_of_stored_files_are_built_not_left_to_the_converter():
    """Every attempt of a file caliper wrote (here: one from before the typed judge fields)
    is built by the builder itself, as the converter builds it."""
    data = json.loads(STORED.read_text(encoding="utf-8"))
    attempts = [a for task in data["tasks"] for a in task["attempts"]]
    assert attempts
    for attempt in attempts:
        assert _built(copy.deepcopy(attempt)) == _reading(attempt)


def test_repeated_texts_are_one_object_per_read():
    table: dict[str, str] = {}
    conv = codec._reading_converter()
    build = builder(conv, AttemptRecord, codec._stored_check, table.setdefault)
    first, second = (build(json.loads(json.dumps(FULL))) for _ in range(2))  # new strings
    assert first.error == second.error and first.error is not second.error  # too long
    assert first.task_name is second.task_name and first.model is second.model
    assert first.checks[0].reason is second.checks[0].reason
    assert first == second


def test_each_read_shares_strings_in_its_own_table():
    """The builders are compiled once; each read runs them with its own table."""
    conv = codec._reading_converter()
    first_table: dict[str, str] = {}
    second_table: dict[str, str] = {}
    first = builder(conv, AttemptRecord, codec._stored_check, first_table.setdefault)
    second = builder(conv, AttemptRecord, codec._stored_check, second_table.setdefault)
    assert first is not None and second is not None and first is not second
    first(json.loads(json.dumps(FULL)))
    assert "claude-sonnet-4-5" in first_table and not second_table
    second(json.loads(json.dumps(FULL)))
    assert first_table.keys() == second_table.keys()
    assert first_table["the check failed"] is not second_table["the check failed"]
