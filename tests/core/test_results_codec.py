"""RunResults <-> JSON: round trip, forward and backward compatibility, clear failures."""

from __future__ import annotations

import json

import pytest
from test_results_support import INFRA, F, P, run, snapshot, task

from caliper.plugin.attempt import Turn, Usage
from caliper.results import codec
from caliper.results.models import Outcome


def sample():
    results = run(
        [
            task("a", [P, F], expected=["my-skill"], activated=[["my-skill"], []]),
            task("b", [INFRA]),
        ],
        skills=[snapshot("my-skill"), snapshot("tdd", kind="git", ref="a1b2c3d")],
        plugin_versions={"caliper-backend-claude": "0.1.0"},
    )
    first = results.tasks[0].attempts[0]
    first.transcript = [
        Turn(role="assistant", content="reading"),
        Turn(role="tool", tool_name="Read", tool_input={"path": "x", "n": [1, 2]}, is_error=False),
    ]
    first.checks[0].details = {"raw": {"score": 1}}
    first.checks[0].model = "m"
    return results


def test_round_trip_is_lossless():
    results = sample()
    assert codec.loads(codec.dumps(results)) == results


def test_enums_are_written_as_values_and_usage_keeps_four_fields():
    data = json.loads(codec.dumps(sample()))
    first = data["tasks"][0]["attempts"][0]
    assert first["outcome"] == "pass"
    assert data["tasks"][1]["attempts"][0]["outcome"] == "infra_error"
    assert set(first["usage"]) == {
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_creation_tokens",
    }
    assert first["transcript"][1]["tool_input"] == {"path": "x", "n": [1, 2]}
    assert data["meta"]["schema_version"] == 1


def test_unknown_keys_from_newer_files_are_ignored():
    data = json.loads(codec.dumps(sample()))
    data["brand_new"] = {"x": 1}
    data["meta"]["era"] = 7
    data["tasks"][0]["attempts"][0]["usage"]["reasoning_tokens"] = 5
    data["meta"]["schema_version"] = 99
    results = codec.from_data(data)
    assert results.tasks[0].attempts[0].usage == Usage(1000, 100, 200, 50)
    assert codec.newer_schema(results)


def test_older_files_without_optional_fields_load():
    data = {
        "meta": {
            "run_id": "2026-01-01T00-00-00Z",
            "spec_name": "old",
            "spec_path": "/x/old.eval.yaml",
            "started_at": "2026-01-01T00:00:00+00:00",
            "skill_snapshots": [{"name": "legacy"}],
        },
        "tasks": [
            {
                "name": "t",
                "index": 0,
                "k": 1,
                "attempts": [{"task_name": "t", "attempt": 1, "outcome": "task_fail"}],
            }
        ],
    }
    results = codec.from_data(data)
    record = results.tasks[0].attempts[0]
    assert record.outcome is Outcome.TASK_FAIL
    assert record.transcript is None and record.activated is None and record.usage is None
    assert results.meta.skill_snapshots[0].source_kind == "path"
    assert results.meta.k == 1


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not a caliper results file"),
        ('{"meta": {"spec_name": "x"}}', "lacks run_id"),
        ('{"name": "some other tool"}', "not a caliper results file"),
    ],
)
def test_foreign_or_broken_text_gets_a_reason(text, needle):
    with pytest.raises(codec.ResultsDecodeError, match=needle):
        codec.loads(text)


def test_a_bad_value_names_where_it_is():
    data = json.loads(codec.dumps(sample()))
    data["tasks"][0]["attempts"][1]["outcome"] = "splendid"
    with pytest.raises(codec.ResultsDecodeError, match=r"tasks\[0\]\.attempts\[1\]\.outcome"):
        codec.from_data(data)


def test_values_json_cannot_hold_are_written_not_fatal():
    results = sample()
    results.tasks[0].attempts[0].checks[0].details = {"odd": {3, 1}, "path": object()}
    data = json.loads(codec.dumps(results))
    details = data["tasks"][0]["attempts"][0]["checks"][0]["details"]
    assert details["odd"] == [1, 3]
    assert details["path"].startswith("<object object")
