"""Results files are decoded one attempt at a time, a piece of text at a time (issue 20).

The walker must give exactly what ``json.loads`` gives (whatever the pieces' boundaries cut
through), fail wherever ``json.loads`` fails, and the runs read through it must be the runs
the plain read (``json.loads`` + ``codec.from_data``) builds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from caliper.results import codec, incremental


def _plain(text: str) -> object:
    """What decode_run must give: json.loads with each attempt marked the same way."""
    data = json.loads(text)
    if isinstance(data, dict) and isinstance(data.get("tasks"), list):
        for task in data["tasks"]:
            if isinstance(task, dict) and isinstance(task.get("attempts"), list):
                task["attempts"] = [
                    ("record", a) if isinstance(a, dict) else a for a in task["attempts"]
                ]
    return data


def _walked(text: str, chunk: int, monkeypatch, *, short: bool = False) -> object:
    """decode_run of ``text`` read CHUNK characters at a time (``short``: a read gives at
    most 1 to 3 characters, as a pipe may)."""
    monkeypatch.setattr(incremental, "CHUNK", chunk)
    at = 0

    def read(size: int) -> str:
        nonlocal at
        if short:
            size = min(size, 1 + at % 3)
        piece = text[at : at + size]
        at += len(piece)
        return piece

    return incremental.decode_run(read, lambda attempt: ("record", attempt))


RUN = {
    "meta": {"run_id": "r", "spec_name": "s", "n": -12.5e-3, "big": 123456789012345678901},
    "tasks": [
        {
            "name": "t \u00e9\u2713 \U0001f600",
            "attempts": [
                {
                    "task_name": "t",
                    "attempt": 1,
                    "transcript": [  # an attempt-shaped tool input stays plain data
                        {"tool_input": {"tasks": [{"attempts": [{"attempt": 2}]}]}}
                    ],
                    "escapes": 'quote " back \\ nl \n tab \t nul \u0000 \ud83d\ude00',
                    "flags": [True, False, None, 0, 1.5, -7, {}, []],
                },
                "not an object",
                17,
            ],
            "index": 0,
        },
        "a task that is not an object",
        {"attempts": "not a list"},
        {"name": "no attempts"},
    ],
    "tasks_after": {"tasks": [{"attempts": [{"x": 1}]}]},
}

DOCUMENTS = [
    json.dumps(RUN),
    json.dumps(RUN, indent=2, ensure_ascii=False),
    json.dumps(RUN, separators=(",", ":")),
    ' \n\t{ "tasks" : [ { "attempts" : [ { } , { "a" : 1 } ] } ] , "x" : 12 } \r\n',
    '{"tasks": [], "tasks": [{"attempts": [{"late": true}]}]}',  # the last value wins
    '{"tasks": {"attempts": [{"a": 1}]}}',
    "[1, 2, {}]",
    "12345",
    '"text"',
    "{}",
    '{"tasks": [{"attempts": []}]}',
]


@pytest.mark.parametrize("text", DOCUMENTS)
@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 1 << 20])
def test_decoding_gives_what_json_loads_gives(text, chunk, monkeypatch):
    assert _walked(text, chunk, monkeypatch) == _plain(text)
    assert _walked(text, chunk, monkeypatch, short=True) == _plain(text)


def test_every_prefix_fails_or_succeeds_as_json_loads_does(monkeypatch):
    text = json.dumps(RUN, indent=1, ensure_ascii=False)
    for end in range(len(text) + 1):
        prefix = text[:end]
        try:
            expected = _plain(prefix)
        except json.JSONDecodeError:
            with pytest.raises(json.JSONDecodeError):
                _walked(prefix, 3, monkeypatch)
        else:
            assert _walked(prefix, 3, monkeypatch) == expected


@pytest.mark.parametrize(
    "text",
    [
        '{"tasks": [{"attempts": [{"a": 1} {"b": 2}]}]}',
        '{"tasks": [{"attempts": [{"a": 1},]}]}',
        '{"tasks" [1]}',
        '{"tasks": [1] "x": 2}',
        "{'tasks': []}",
        '{"tasks": [{"attempts": [tru]}]}',
        '{"tasks": []} trailing',
        '{"tasks": [{"attempts": [{"a": "\x01"}]}]}',
        "\ufeff{}",
        "",
    ],
)
def test_what_json_refuses_is_refused(text, monkeypatch):
    with pytest.raises(json.JSONDecodeError):
        json.loads(text)
    for chunk in (1, 1 << 20):
        with pytest.raises(json.JSONDecodeError):
            _walked(text, chunk, monkeypatch)


@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("chunk", [16, 64, 200, 1 << 20])
def test_short_tasks_whole_and_long_ones_attempt_by_attempt(chunk, indent, monkeypatch):
    """A task whose text fits in the next CHUNK characters is decoded in one go, a longer one
    attempt by attempt (and every later one too): the same data either way, each attempt
    given to the callback once, in order, and no task's text decoded whole when longer."""

    def task(name: str, answer: str, count: int) -> dict:
        attempts = [{"n": f"{name}{i}", "answer": answer} for i in range(count)]
        return {"name": name, "attempts": attempts, "k": count}

    run = {"tasks": [task("a", "x", 2), task("b", "y" * 150, 3), task("c", "z", 2)]}
    text = json.dumps(run, indent=indent)
    seen: list[str] = []
    scanned: list[int] = []
    whole_task = incremental._Walker.whole_task

    def counting(self, index):
        found, at = whole_task(self, index)
        if found is not None:
            scanned.append(len(json.dumps(found, indent=indent)))
        return found, at

    def on_attempt(attempt: dict) -> tuple:
        seen.append(attempt["n"])
        return ("record", attempt)

    monkeypatch.setattr(incremental, "CHUNK", chunk)
    monkeypatch.setattr(incremental._Walker, "whole_task", counting)
    pieces = iter(text[i : i + chunk] for i in range(0, len(text), chunk))
    assert incremental.decode_run(lambda _size: next(pieces, ""), on_attempt) == _plain(text)
    assert seen == ["a0", "a1", "b0", "b1", "b2", "c0", "c1"]
    assert all(size <= 2 * chunk for size in scanned)
    if chunk in (16, 1 << 20):  # shorter than any task / longer than the run
        assert len(scanned) == (3 if chunk == 1 << 20 else 0)


def test_a_long_value_is_read_in_growing_pieces(monkeypatch):
    """A value longer than CHUNK makes the next reads longer (at least what is held), so a
    huge attempt is not rescanned once per CHUNK."""
    monkeypatch.setattr(incremental, "CHUNK", 10)
    text = json.dumps({"tasks": [{"attempts": [{"answer": "x" * 10_000}]}]})
    sizes = []
    source = iter([text])
    held = [""]

    def read(size: int) -> str:
        sizes.append(size)
        if not held[0]:
            held[0] = next(source, "")
        piece, held[0] = held[0][:size], held[0][size:]
        return piece

    data = incremental.decode_run(read, lambda attempt: attempt)
    assert data == json.loads(text)
    assert len(sizes) < 20  # doubling: ~log2(10_000 / 10) reads, not ~1,000


def test_json_pieces_join_to_json_dumps():
    from test_results_support import F, P, run, task

    results = run([task("a", [P, F, P]), task("b \u2713", [F])])
    whole = codec.to_data(results)
    pieces = list(codec.json_pieces(codec.to_data_by_attempt(results), size=100))
    assert len(pieces) > 3
    assert all(len(piece) < 100 + 200 for piece in pieces[:-1])
    assert "".join(pieces) == json.dumps(whole, indent=2, ensure_ascii=False)
    with pytest.raises(TypeError, match="not JSON serializable"):
        list(codec.json_pieces({"x": object()}))


# -- runs read through it ---------------------------------------------------------------------
STORED = Path(__file__).parent / "stored" / "judged-run-before-typed-judge-fields.json"


@pytest.fixture(scope="module")
def fake_run(tmp_path_factory) -> Path:
    """A real run of the fake agent: transcripts, final answers written once, checks, text
    that is not ASCII, an infra error."""
    from caliper_fakeagent.harness import Workspace

    space = Workspace.create(tmp_path_factory.mktemp("fake-run"))
    spec = space.spec("""\
        tasks:
          - name: writes \u00e9t\u00e9 \u2713
            prompt: |
              fake: bash echo hi > out.txt
              fake: say I wrote out.txt \U0001f600 "quoted" \\ back
            assert: "assert open('out.txt').read().strip() == 'hi'"
          - name: fails
            prompt: "fake: say nothing done"
            assert: "assert False, 'nothing \u00e0 faire'"
          - name: crashes
            prompt: "fake: exit 3"
            assert: "assert True"
        """)
    run = space.run(spec, "--k", "3")
    assert run.results_path is not None, run.stderr
    return run.results_path


@pytest.mark.parametrize("transcripts", [True, False])
@pytest.mark.parametrize("chunk", [5, 1 << 20])
@pytest.mark.parametrize("which", ["fake run", "stored older file"])
def test_a_run_reads_as_the_plain_read_builds_it(fake_run, which, chunk, transcripts, monkeypatch):
    from caliper.results.store import load_run

    monkeypatch.setattr(incremental, "CHUNK", chunk)
    path = fake_run if which == "fake run" else STORED
    text = path.read_text(encoding="utf-8")
    plain = codec.from_data(json.loads(text), transcripts=transcripts)
    assert codec.read_file(path, transcripts=transcripts) == plain  # not the fallback
    assert load_run(path, transcripts=transcripts) == plain
    assert codec.loads(text, transcripts=transcripts) == plain
    if transcripts and which == "fake run":
        assert any(a.transcript for t in plain.tasks for a in t.attempts)


def test_report_json_is_the_plain_reads_text_byte_for_byte(fake_run):
    from test_results_support import caliper

    from caliper.report.tool_usage_view import run_tool_usage
    from caliper.results.run_clock import clock_data, run_clock
    from caliper.results.scoring import score_run, scores_data, usage_data
    from caliper.results.spend import spend_data

    plain = codec.from_data(json.loads(fake_run.read_text(encoding="utf-8")))
    expected = codec.to_data(plain)
    scored = score_run(plain)
    expected.update(path=str(fake_run), scores=scores_data(scored), usage_totals=usage_data(scored))
    expected["wall_clock"] = clock_data(run_clock(plain.meta))
    expected["spend"] = spend_data(plain)
    expected["tool_usage"] = run_tool_usage(plain).data()
    out = caliper("report", str(fake_run), "--format", "json", cwd=fake_run.parent)
    assert out.returncode == 0, out.stderr
    assert out.stdout == json.dumps(expected, indent=2, ensure_ascii=False) + "\n"


# -- the guard: reading a summary never holds every attempt's dict ----------------------------
def test_a_summary_read_holds_one_attempt_dict_at_a_time(fake_run, tmp_path):
    """A 20,000-attempt file read as a summary peaks near the size of the run it builds,
    far below what the decoded dicts of all its attempts would take next to it."""
    import gc
    import tracemalloc

    from caliper.results.store import load_run

    data = json.loads(fake_run.read_text(encoding="utf-8"))
    tasks = data["tasks"]
    data["tasks"] = [
        {**tasks[n % len(tasks)], "name": f"{tasks[n % len(tasks)]['name']} #{n}"}
        for n in range(20_000 // 3)
    ]
    big = tmp_path / "big.json"
    big.write_text(json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8")
    attempts = sum(len(t["attempts"]) for t in data["tasks"])
    assert attempts >= 19_998
    del data, tasks

    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        run = load_run(big, transcripts=False)
        held, peak = tracemalloc.get_traced_memory()
        records = held - before  # the summary itself
        del run
        gc.collect()
        tracemalloc.reset_peak()
        dicts_before = tracemalloc.get_traced_memory()[0]
        decoded = json.loads(big.read_text(encoding="utf-8"))
        dicts = tracemalloc.get_traced_memory()[0] - dicts_before  # every attempt's dict
        del decoded
    finally:
        tracemalloc.stop()
    # the summary, plus one task's dicts, the text in hand (CHUNK characters, 4 bytes each at
    # worst, read next to what is left) and the read's table of strings: a tenth of the dicts
    # of all attempts is room to spare
    bound = records + 16 * incremental.CHUNK + dicts // 10
    assert dicts > 2 * records  # the bound is meaningful: all dicts at once would break it
    assert peak - before < bound, (peak - before, records, dicts)


META = '{"run_id": "r", "spec_name": "s", "spec_path": "s.eval.yaml", "started_at": "t"}'


@pytest.mark.parametrize(
    "content",
    [
        f'{{"meta": {META}, "tasks": [{{"name": "t", "index": 0, "k": 1, "attempts": '
        '[{"task_name": "t", "attempt": "one", "outcome": "pass"}]}]}',
        f'{{"meta": {META}, "tasks": [{{"name": "t", "index": 0, "k": 1, "attempts": [7]}}]}}',
        f'{{"meta": {META}, "tasks": [{{"name": "t", "index": 0, "k": 1, "attempts": {{}}}}]}}',
        f'{{"meta": {META}, "tasks": ["not a task"]}}',
        f'{{"meta": {META}, "tasks": [{{"name": "t", "attempts": []}}]}}',
        '{"tasks": []}',
        '{"meta": {"run_id": "r", "spec_name": "s"}, "tasks": [}',
    ],
)
def test_an_odd_file_reads_as_the_plain_read_reads_it(tmp_path, content):
    """What the walker does not take as a run is left to the plain read: the same run (an
    empty object for attempts is taken as no attempts) or the same message."""
    from caliper.results.store import ResultsError, load_run

    path = tmp_path / "odd.json"
    path.write_text(content, encoding="utf-8")
    assert codec.read_file(path) is None  # left to the plain read
    try:
        plain = codec.from_data(codec.parse(content), transcripts=False)
    except codec.ResultsDecodeError as exc:
        with pytest.raises(ResultsError) as info:
            load_run(path, transcripts=False)
        assert info.value.message == f"{path} is not a readable caliper results file: {exc}."
    else:
        assert load_run(path, transcripts=False) == plain


def test_a_file_that_is_not_utf8_is_refused_as_before(tmp_path):
    from caliper.results.store import ResultsError, load_run

    path = tmp_path / "latin1.json"
    path.write_bytes(f'{{"meta": {META}, "tasks": [{{"name": "caf\xe9"}}]}}'.encode("latin-1"))
    with pytest.raises(ResultsError, match=r"Cannot read results file .*utf-8"):
        load_run(path)


def test_values_cattrs_coerces_read_as_the_plain_read_coerces_them(tmp_path):
    """The incremental read structures with its own converter: values of another JSON type
    than the field's (a number for a text, text for a number), judge fields stored in a
    check's details (a third party's own ``judge_usage`` too) and optional fields absent,
    null or set come out as the plain read makes them."""
    attempt = {
        "task_name": 12,
        "attempt": "2",
        "outcome": "task_fail",
        "reason": 3.5,
        "duration_seconds": 4,
        "usage": {"input_tokens": "10", "output_tokens": 2.0, "cost_usd": 1},
        "activated": ["a", 5],
        "activation_passed": 0,
        "checks": [
            {
                "key": "expect",
                "passed": None,
                "details": {
                    "judge_backend": "b",
                    "judge_model": 7,
                    "judge_usage": {"input_tokens": 1, "output_tokens": 2, "cost_usd": 0.5},
                    "own": [1, "x"],
                },
            },
            {"key": "mine", "passed": 1, "details": {"judge_usage": "my own value"}},
            {"key": "bare", "passed": True},
        ],
        "tries": [{"outcome": "infra_error", "usage": None, "waited_seconds": 3}],
        "user_setup": {"skills": ["s"]},
        "retry_after": None,
        "transcript": [{"role": "tool", "tool_name": "x", "tool_input": {"a": 1}}],
    }
    content = (
        f'{{"meta": {META}, "tasks": [{{"name": "t", "index": "0", "k": 1.0, '
        f'"activation_expected": null, "attempts": [{json.dumps(attempt)}]}}]}}'
    )
    path = tmp_path / "coerced.json"
    path.write_text(content, encoding="utf-8")
    for transcripts in (True, False):
        found = codec.read_file(path, transcripts=transcripts)
        assert found is not None  # not left to the plain read
        assert found == codec.from_data(codec.parse(content), transcripts=transcripts)
    record = codec.read_file(path).tasks[0].attempts[0]
    assert (record.task_name, record.attempt, record.reason) == ("12", 2, "3.5")
    assert record.checks[0].usage is not None and record.checks[0].model == "7"
    assert record.checks[1].usage is None and record.checks[1].details == {}
