"""Assembling a run's results file from its journaled attempt lines.

The run keeps each attempt's journal line in memory and, at the end, writes the results file
piece by piece from those lines (never the whole text, never the journal read back): the text
must be exactly what :func:`caliper.results.codec.dumps_data` makes of the assembled data, the
results exactly what reading that text gives, and an attempt recorded twice keeps its last
record, as the journal's reader does.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from caliper.plugin.attempt import Turn, Usage
from caliper.results import codec
from caliper.results.compact import StorageLimits
from caliper.results.journal import JournalWriter, assemble, read_journal
from caliper.results.models import AttemptRecord, CheckRecord, Outcome, RunMeta
from caliper.runner.run.assemble import assemble_results, task_entries
from caliper.runner.run.journaling import BLOCK_LINES, PackedLines, RunJournal
from caliper.system.output_file import write_output


def _spec(*names: str) -> Any:
    tasks = [
        SimpleNamespace(name=name, index=i, activates=["shout"], checks={"assert": None})
        for i, name in enumerate(names)
    ]
    return SimpleNamespace(name="demo", tasks=tasks, path=Path("demo.eval.yaml"))


def _record(task: str, number: int, outcome: Outcome = Outcome.PASS, **extra: Any) -> AttemptRecord:
    fields: dict[str, Any] = {
        "duration_seconds": 0.25 * number,
        "usage": Usage(input_tokens=10, output_tokens=number),
        "final_answer": f"done {task} #{number} ✓",
        "transcript": [
            Turn(role="tool", tool_name="Skill", tool_input={"skill": "shout", "n": [1, 2]}),
            Turn(role="assistant", content=f"done {task} #{number} ✓"),
        ],
        "activated": ["shout"],
        "checks": [CheckRecord(key="assert", passed=outcome is Outcome.PASS, details={"x": 1})],
        "model": "m",
    }
    return AttemptRecord(task_name=task, attempt=number, outcome=outcome, **{**fields, **extra})


def _meta(records: list[AttemptRecord]) -> RunMeta:
    return RunMeta(
        run_id="2026-12-07T00-00-00Z",
        spec_name="demo",
        spec_path="demo.eval.yaml",
        started_at="2026-12-07T00:00:00+00:00",
        model=records[0].model if records else None,
        k=3,
        plugin_versions={"caliper-x": "1.0"},
    )


def _line(record: AttemptRecord) -> str:
    return codec.line(codec.attempt_data(record, StorageLimits()))


def test_the_text_written_in_pieces_is_what_dumps_data_makes(tmp_path: Path) -> None:
    spec = _spec("alpha", "beta", "gamma", "empty")
    records = [
        _record("beta", 2, Outcome.TASK_FAIL, reason="bad \ud800 surrogate and \x1b escape"),
        _record("alpha", 3),
        _record("alpha", 1, tries=[]),
        _record("beta", 1, user_setup={"skills": ["mine"]}),
        _record("gamma", 1, Outcome.INFRA_ERROR, error="no login", transcript=None),
        _record("not in the spec", 1),
        _record("alpha", 2, final_answer=None),
    ]
    lines = [_line(r) for r in records]
    aborted, reasons = {"gamma"}, {"beta": "the bar was met"}
    assembled = assemble_results(_meta, spec, 3, lines, aborted=aborted, task_stop_reasons=reasons)
    meta_data = codec.converter().unstructure(_meta(assembled.results.tasks[0].attempts))
    data = assemble(
        meta_data, task_entries(spec, 3), [json.loads(x) for x in lines], aborted, reasons
    )
    expected = codec.dumps_data(data)
    assert str(assembled.text) == expected
    assert "".join(assembled.text) == expected  # it can be written again (an --output copy)
    assert assembled.results == codec.from_data(json.loads(expected))
    assert [a.attempt for a in assembled.results.tasks[0].attempts] == [1, 2, 3]
    out = tmp_path / "run.json"
    write_output(out, assembled.text)
    assert out.read_text(encoding="utf-8") == expected


def test_a_run_with_no_task_or_no_attempt_is_written_as_before() -> None:
    for spec in (_spec(), _spec("alpha")):
        assembled = assemble_results(_meta, spec, 1, [])
        data = assemble(
            codec.converter().unstructure(_meta([])), task_entries(spec, 1), [], (), None
        )
        assert str(assembled.text) == codec.dumps_data(data)


def _journal(tmp_path: Path, carried: list[dict[str, Any]]) -> RunJournal:
    """A run's journal without a real run: the metadata comes from :func:`_meta`."""
    options = SimpleNamespace(max_turn_chars=None, max_attempt_chars=None, output=None, k=3)
    prepared = SimpleNamespace(options=options, results_root=tmp_path, spec=_spec("alpha"))
    plan = SimpleNamespace(carried=carried, run_id="r1", started_at="now", history={}, notes={})
    journal = RunJournal(
        prepared,  # type: ignore[arg-type]
        plan,  # type: ignore[arg-type]
        judge_engine=None,  # type: ignore[arg-type]
        cli_version=lambda **_: None,
        notify=lambda _text: None,
    )
    journal.meta = lambda records, run_id, final=True: _meta(records)  # type: ignore[method-assign]
    return journal


def test_an_attempt_recorded_twice_keeps_its_last_record(tmp_path: Path) -> None:
    """A carried attempt journaled again (a resume re-recording it) and an attempt recorded
    twice in the run both keep their last record only, with or without a journal file."""
    carried = [codec.attempt_data(_record("alpha", 1, Outcome.TASK_FAIL), StorageLimits())]
    for with_file in (False, True):
        journal = _journal(tmp_path / str(with_file), carried)
        if with_file:
            journal.folder.mkdir(parents=True)
            path = journal.folder / "r1.journal.jsonl"
            journal.writer = JournalWriter.create(
                path, {"caliper_journal": 1, "meta": {}, "tasks": []}
            )
        journal.record(_record("alpha", 2, Outcome.TASK_FAIL))
        journal.record(_record("alpha", 1, Outcome.PASS))
        journal.record(_record("alpha", 2, Outcome.TIMEOUT))
        if with_file:  # what the journal's reader keeps of the same lines
            written = read_journal(path).attempts
            assert sorted((a["attempt"], a["outcome"]) for a in written) == [
                (1, "pass"),
                (2, "timeout"),
            ]
        results, _, _ = journal.finish(aborted=(), stop_reason=None, save=False)
        kept = [(a.attempt, a.outcome) for a in results.tasks[0].attempts]
        assert kept == [(1, Outcome.PASS), (2, Outcome.TIMEOUT)]


def test_packed_lines_give_back_each_attempts_last_line_in_first_put_order() -> None:
    """Lines packed in blocks and the newest block alike, one put again in each."""
    lines = PackedLines()
    expected = []
    for number in range(1, 2 * BLOCK_LINES + 6):
        line = _line(_record("alpha", number, reason="ünïcode ✓ " * (number % 7)))
        lines.put(("alpha", number), line)
        expected.append(line)
    for number in (3, BLOCK_LINES + 2, 2 * BLOCK_LINES + 4):  # two packed blocks, the newest
        again = _line(_record("alpha", number, Outcome.TIMEOUT))
        lines.put(("alpha", number), again)
        expected[number - 1] = again
    assert len(lines) == len(expected)
    assert list(lines) == expected
    assert [lines[i] for i in reversed(range(len(lines)))] == expected[::-1]
