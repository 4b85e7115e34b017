"""``AttemptRecord.undeclared`` (issue 11 item 2): saved, and absent from older files."""

from __future__ import annotations

import json

from test_results_support import P, run, task

from caliper.results import codec


def test_undeclared_round_trips_and_old_files_load_with_an_empty_list():
    results = run([task("a", [P], activated=[[]])])
    results.tasks[0].attempts[0].undeclared = ["nested-one"]
    data = json.loads(codec.dumps(results))
    assert data["tasks"][0]["attempts"][0]["undeclared"] == ["nested-one"]
    assert codec.loads(codec.dumps(results)) == results
    del data["tasks"][0]["attempts"][0]["undeclared"]
    old = codec.loads(json.dumps(data))
    assert old.tasks[0].attempts[0].undeclared == []
