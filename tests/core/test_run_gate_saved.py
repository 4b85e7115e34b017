"""The bars a run was gated on are saved with it (``meta.gate``) and shown by ``caliper
report`` of that run, through the real ``caliper`` script and the fake agent.

A task's bar is judged on the exact Clopper–Pearson interval: 10/10 → [(0.025)^(1/10), 1]
= [69.2 %, 100 %], 0/10 → [0, 1 − 0.025^(1/10)] = [0 %, 30.8 %].
"""

from __future__ import annotations

import json
import subprocess

import pytest
from gate_support import seeded_spec

from caliper_fakeagent.harness import CALIPER, Workspace


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory):
    space = Workspace.create(tmp_path_factory.mktemp("saved-gate"))
    spec = seeded_spec(space, {"always": "P" * 10, "never": "F" * 10})
    copy = space.root / "copy.json"
    done = space.run(
        spec,
        "--k",
        "10",
        "--min-score",
        "always=0.65",
        "--min-score",
        "never=65%",
        "--inconclusive",
        "pass",
        "--output",
        str(copy),
        timeout=180,
    )
    return space, spec, done, copy


def _report(space: Workspace, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CALIPER), "report", *args],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_bars_and_verdicts_are_saved_in_meta(gated) -> None:
    _space, _spec, done, copy = gated
    assert done.returncode == 3, done.stdout + done.stderr
    gate = done.results["meta"]["gate"]
    assert (gate["passed"], gate["inconclusive"], gate["confidence"]) == (False, "pass", 0.95)
    always, never = gate["bars"]
    assert (always["metric"], always["task"], always["threshold"]) == ("score", "always", 0.65)
    assert (always["verdict"], always["passed"], always["judged_by"]) == ("met", True, "interval")
    assert always["interval"]["low"] == pytest.approx(0.025 ** (1 / 10), abs=1e-6)
    assert (never["verdict"], never["passed"]) == ("failed", False)
    assert never["interval"]["high"] == pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-6)
    # the --output copy holds the same file
    assert json.loads(copy.read_text(encoding="utf-8"))["meta"]["gate"] == gate


def test_report_of_the_run_shows_what_it_was_held_to(gated) -> None:
    space, spec, done, _copy = gated
    shown = _report(space, str(done.results_path))
    assert shown.returncode == 0, shown.stderr  # a record, not a new judgement
    out = shown.stdout
    assert "Bars this run was held to (as judged when it ran)" in out
    assert "(95% intervals; inconclusive counts as pass)" in out
    assert "✓ met  success of task 'always' ≥ 65%\n      10/10 = 100% [69.2%–100%]" in out
    assert "✗ failed  success of task 'never' ≥ 65%\n      0/10 = 0% [0%–30.8%]" in out
    assert "Gate: FAILED (1 of 2 bars not met)" in out
    # bars given to report judge the run again (and decide the exit code) instead
    again = _report(space, str(spec), "--min-score", "always=0.65")
    assert again.returncode == 0, again.stderr
    assert "held to" not in again.stdout and "Gate: PASSED (1 of 1 bars)" in again.stdout


def test_a_file_without_a_gate_still_reports(gated, tmp_path) -> None:
    space, _spec, done, _copy = gated
    data = done.results
    del data["meta"]["gate"]  # as a file written before bars were saved
    old = space.root / "old.json"
    old.write_text(json.dumps(data), encoding="utf-8")
    shown = _report(space, str(old))
    assert shown.returncode == 0, shown.stderr
    assert "Bars" not in shown.stdout and "Traceback" not in shown.stderr
    assert json.loads(_report(space, str(old), "--format", "json").stdout)["meta"]["gate"] is None


@pytest.mark.parametrize(
    "data",
    [None, "gate", {"bars": "x"}, {"bars": [{"metric": "speed"}]}, {"bars": [], "inconclusive": 1}],
)
def test_an_unreadable_stored_gate_is_ignored(data) -> None:
    from caliper.results.gate import gate_from_data

    assert gate_from_data(data) is None


def test_the_gate_is_written_in_place_exactly_as_a_full_dump_would(gated) -> None:
    """``with_gate`` replaces the ``"gate": null`` line without parsing the attempts; the
    text must equal parsing the file and dumping it with the block, and a file in another
    layout (compact JSON) takes the slow path to the same data."""
    from caliper.commands.gate_options import with_gate
    from caliper.results import codec

    _space, _spec, done, _copy = gated
    data = done.results
    block = data["meta"]["gate"]
    data["meta"]["gate"] = None
    plain = codec.dumps_data(data)
    assert '\n    "gate": null,\n' in plain
    fast = with_gate(plain, block)
    data["meta"]["gate"] = block
    assert fast == codec.dumps_data(data)
    data["meta"]["gate"] = None
    compact = json.dumps(data)
    assert json.loads(with_gate(compact, block)) == json.loads(fast)


def test_a_regraded_run_does_not_inherit_its_parents_verdicts(tmp_path) -> None:
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: judged
            prompt: "fake: say all done"
            expect: "The agent says it is done. fake-judge: pass"
        """)
    parent = space.run(spec, "--k", "2", "--judge-model", "fake", "--min-score", "judged=0.1")
    assert parent.returncode == 0, parent.stdout + parent.stderr
    assert parent.results["meta"]["gate"]["bars"][0]["verdict"] == "met"
    spec.write_text(
        spec.read_text().replace("fake-judge: pass", "fake-judge: fail"), encoding="utf-8"
    )
    done = subprocess.run(
        [str(CALIPER), "regrade", parent.results["meta"]["run_id"]],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    child = max(
        (space.root / ".caliper" / "results" / "demo").glob("*.json"),
        key=lambda f: f.stat().st_mtime_ns,
    )
    meta = json.loads(child.read_text(encoding="utf-8"))["meta"]
    assert meta["derived_by"] == "regrade" and meta["gate"] is None


def test_markdown_summary_of_the_run_shows_what_it_was_held_to(gated) -> None:
    space, _spec, done, _copy = gated
    shown = _report(space, str(done.results_path), "--format", "markdown")
    assert shown.returncode == 0, shown.stderr
    assert "### Bars this run was held to (as judged when it ran) (95% intervals" in shown.stdout
    assert "**Gate: FAILED** (1 of 2 bars not met)" in shown.stdout
