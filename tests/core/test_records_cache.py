"""The records sidecar of a stored run: a read without transcripts gives, from it, exactly
what decoding the results file gives, and never from a sidecar saved for other content."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_results_support import INFRA, F, P, caliper, run, snapshot, task

from caliper.plugin.attempt import Turn, Usage
from caliper.results import codec, records_cache
from caliper.results.models import AttemptRecord, CheckRecord, Outcome, TryRecord
from caliper.results.store import load_run
from caliper.system.output_file import write_output


def varied_run():
    """A run with every kind of field set, left at its default, or ``None``."""
    results = run(
        [
            task("a", [P, F, P], expected=["my-skill"], activated=[["my-skill"], [], None]),
            task("b \u00e9t\u00e9 \U0001f600", [INFRA, P]),
            task("c", []),
        ],
        skills=[snapshot("my-skill"), snapshot("tdd", kind="git", ref="a1b2c3d", ablated=True)],
        plugin_versions={"caliper-backend-claude": "0.1.0"},
        ablated=["tdd"],
        gate={"bars": [{"kind": "min_score", "value": 0.5}], "passed": True},
        matrix={"id": "m-1", "engine": "x", "engines": ["x", "y"]},
        user_setup={"skills": ["mine"]},
        resumed_at=["2026-11-30T19:00:00+00:00"],
        timeouts="unusable",
    )
    first = results.tasks[0].attempts[0]
    first.transcript = [Turn(role="assistant", content="reading")]
    first.final_answer = "done \u2713"
    first.checks = [
        CheckRecord(
            key="expect",
            passed=True,
            reason="ok",
            details={"raw": {"score": 1}, "list": [1, "x", None]},
            usage=Usage(410, 35, None, None, 0.0012),
            backend="claude-code",
            model="m",
            prompt_version="expect-v1",
        ),
        CheckRecord(key="assert", passed=None, error="boom", details={}),
    ]
    first.tries = [
        TryRecord(Outcome.INFRA_ERROR, "rate limited", 1.5, Usage(1, 2), "m", 3.0, 4.0, "r0"),
        TryRecord(Outcome.TIMEOUT),
    ]
    first.user_setup = {"skills": ["mine"], "agents": []}
    first.retry_after = 2.5
    first.undeclared = ["other"]
    first.built_in = ["builtin"]
    first.forbidden_reads = ["/secret"]
    first.history, first.history_sha256 = "h.jsonl", "abc"
    first.workdir_archive, first.workdir_note = "w/a-1.tar.gz", "cut"
    first.setup_failed = True
    first.started_at = "2026-11-30T18:01:34.000+00:00"
    second = results.tasks[0].attempts[1]
    second.usage = Usage(None, None, None, None, None)
    second.duration_seconds = None
    results.tasks[0].stop_reason = "precise enough"
    results.tasks[0].aborted = True
    results.tasks[1].check_keys = ["expect", "assert"]
    return results


def stored(folder: Path, results, name: str = "2026-11-30T18-01-33Z.json") -> Path:
    """``results`` written as a run file in a store under ``folder``."""
    path = folder / ".caliper" / "results" / "demo" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(codec.dumps(results), encoding="utf-8")
    return path


def plain(path: Path):
    """The run decoded from the file itself, without transcripts."""
    return codec.from_data(json.loads(path.read_text(encoding="utf-8")), transcripts=False)


def same(got, expected) -> None:
    """Equal records, with values of the same JSON types (1 is not 1.0 nor True here)."""
    assert got == expected
    assert json.dumps(codec.to_data(got)) == json.dumps(codec.to_data(expected))


def from_sidecar_only(path: Path, monkeypatch):
    """``load_run`` without transcripts, failing if it decodes the results file."""

    def refuse(*_args, **_kwargs):
        raise AssertionError("the results file was decoded")

    with monkeypatch.context() as patch:
        patch.setattr(codec, "read_file", refuse)
        return load_run(path, transcripts=False)


def test_a_sidecar_read_gives_the_records_the_file_gives(tmp_path, monkeypatch):
    path = stored(tmp_path, varied_run())
    expected = plain(path)
    same(load_run(path, transcripts=False), expected)  # decoded; the sidecar saved
    assert records_cache.records_path(path).is_file()
    same(from_sidecar_only(path, monkeypatch), expected)
    assert load_run(path, transcripts=True).tasks[0].attempts[0].transcript  # not from it
    assert records_cache.records_path(path).stat().st_mode == path.stat().st_mode


def test_values_another_json_type_read_as_the_file_reads_them(tmp_path, monkeypatch):
    """Coerced values (a number for a text, text for a number, a judge's own ``judge_usage``)
    come out of the sidecar as the decode made them."""
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
            {"key": "mine", "passed": 1, "details": {"judge_usage": "my own value"}},
            {"key": "bare", "passed": True},
        ],
        "tries": [{"outcome": "infra_error", "usage": None, "waited_seconds": 3}],
    }
    data = codec.to_data(run([]))
    data["tasks"] = [{"name": "t", "index": "0", "k": 1.0, "attempts": [attempt]}]
    path = tmp_path / ".caliper" / "results" / "demo" / "coerced.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    expected = plain(path)
    same(load_run(path, transcripts=False), expected)
    same(from_sidecar_only(path, monkeypatch), expected)


def test_a_rewritten_file_is_never_read_from_a_stale_sidecar(tmp_path, monkeypatch):
    """Rewritten in place to the same size, with its modification time put back (the same
    size, time and inode): the sidecar saved for the old content is not used."""
    path = stored(tmp_path, varied_run())
    load_run(path, transcripts=False)
    before = path.stat()
    text = path.read_text(encoding="utf-8")
    assert '"duration_seconds": 10.0' in text
    changed = text.replace('"duration_seconds": 10.0', '"duration_seconds": 99.0', 1)
    assert len(changed) == len(text)
    with open(path, "r+", encoding="utf-8") as file:  # in place: the same inode
        file.write(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    got = load_run(path, transcripts=False)
    same(got, plain(path))
    assert got.tasks[0].attempts[0].duration_seconds == 99.0
    same(from_sidecar_only(path, monkeypatch), plain(path))  # saved again for the new content


def test_a_run_saved_again_over_the_file_is_read_anew(tmp_path):
    """A regrade-like rewrite through the store's own writer."""
    from caliper.results.store import write_atomic

    results = varied_run()
    path = stored(tmp_path, results)
    load_run(path, transcripts=False)
    results.tasks[1].attempts[1].checks[0].passed = False
    results.tasks[1].attempts[1].outcome = Outcome.TASK_FAIL
    write_atomic(path, codec.dumps(results))
    got = load_run(path, transcripts=False)
    same(got, plain(path))
    assert got.tasks[1].attempts[1].outcome is Outcome.TASK_FAIL


def _pieces(data: bytes) -> tuple[dict, list]:
    """A sidecar's header and its tasks' lists (our own test data: plain ``pickle``)."""
    import io
    import pickle

    file = io.BytesIO(data)
    header = json.loads(file.readline())
    tasks = [pickle.load(file) for _ in range(header["tasks"])]
    assert file.read() == b""
    return header, tasks


def _joined(header: dict, tasks: list) -> bytes:
    import pickle

    return (json.dumps(header) + "\n").encode() + b"".join(pickle.dumps(t, 5) for t in tasks)


def _renamed_outcome(data: bytes) -> bytes:
    header, tasks = _pieces(data)
    tasks[0][3][0][2] = "no such outcome"  # task 0, its attempts, the first, its outcome
    return _joined(header, tasks)


def _version(data: bytes, version: int) -> bytes:
    header, tasks = _pieces(data)
    return _joined({**header, "version": version}, tasks)


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[:-5],  # the last task cut short
        lambda data: data[: len(data) // 2],
        lambda data: b"",
        lambda data: b"not json\n",
        lambda data: _version(data, 99),
        lambda data: data.replace(b'"layout": "', b'"layout": "x', 1),
        _renamed_outcome,
        lambda data: data + __import__("pickle").dumps([]),  # a task too many
        lambda data: data + b"\x00",  # a byte past the last task
    ],
)
def test_a_damaged_sidecar_is_ignored_and_saved_again(tmp_path, monkeypatch, damage):
    path = stored(tmp_path, varied_run())
    load_run(path, transcripts=False)
    sidecar = records_cache.records_path(path)
    sidecar.write_bytes(damage(sidecar.read_bytes()))
    same(load_run(path, transcripts=False), plain(path))
    same(from_sidecar_only(path, monkeypatch), plain(path))


CALLED: list[str] = []


def record_call(what: str) -> list:
    CALLED.append(what)
    return []


class _Planted:
    """Pickles as a call of :func:`record_call` (what a hostile pickle would do)."""

    def __reduce__(self):
        return (record_call, ("the planted call ran",))


def test_a_sidecar_naming_a_function_is_refused_without_calling_it(tmp_path, monkeypatch):
    """A sidecar with the right header whose pickle names a function (or a class) is not
    read: nothing it names is called, and the run is decoded from its file."""
    path = stored(tmp_path, varied_run())
    load_run(path, transcripts=False)
    sidecar = records_cache.records_path(path)
    header, tasks = _pieces(sidecar.read_bytes())
    for planted in ([_Planted()], [*tasks[:1], _Planted(), *tasks[2:]]):
        sidecar.write_bytes(_joined(header, planted if len(planted) > 1 else planted * 3))
        CALLED.clear()
        same(load_run(path, transcripts=False), plain(path))
        assert CALLED == []
    import pickle

    assert pickle.loads(pickle.dumps(_Planted())) == [] and CALLED  # the pickle would call it
    same(from_sidecar_only(path, monkeypatch), plain(path))  # saved again, readable


def test_a_record_field_without_a_sidecar_form_only_costs_the_decode(tmp_path, monkeypatch):
    path = stored(tmp_path, varied_run())

    def unsupported():
        raise records_cache.CacheLayoutError("no sidecar form for a new field")

    monkeypatch.setattr(records_cache, "_functions", unsupported)
    same(load_run(path, transcripts=False), plain(path))
    same(load_run(path, transcripts=False), plain(path))
    assert not records_cache.records_path(path).exists()


def test_a_file_outside_a_store_gets_no_sidecar(tmp_path):
    path = tmp_path / "export.json"
    path.write_text(codec.dumps(varied_run()), encoding="utf-8")
    same(load_run(path, transcripts=False), plain(path))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export.json"]


def test_every_record_field_has_a_sidecar_form():
    """A field added to a record class of a type the sidecar cannot hold fails here, not in
    a user's read (which would only fall back to decoding every time)."""
    layout = records_cache._functions().layout
    for name in ("AttemptRecord", "CheckRecord", "TryRecord", "Usage", "RunMeta"):
        assert f"{name}:" in layout
    assert "transcript=" not in layout
    assert AttemptRecord.__attrs_attrs__.transcript.name == "transcript"


def test_report_and_compare_print_the_same_from_the_sidecar(tmp_path):
    """``report`` (text, markdown) and ``compare`` of stored runs print the same with no
    sidecar, as they save it, and reading it, as of the same files outside a store."""
    before = varied_run()
    after = varied_run()
    after.meta.run_id = "2026-11-30T19-01-33Z"
    after.tasks[0].attempts[2].outcome = Outcome.TASK_FAIL
    a = stored(tmp_path, before, "a.json")
    b = stored(tmp_path, after, "b.json")
    outside = tmp_path / "outside"
    outside.mkdir()
    for path in (a, b):
        (outside / path.name).write_bytes(path.read_bytes())
    commands = [
        ("report", "{a}"),
        ("report", "{a}", "--format", "markdown"),
        ("compare", "{a}", "{b}"),
        ("compare", "{a}", "{b}", "--format", "json"),
    ]
    for command in commands:
        printed = []
        for folder in (outside, a.parent, a.parent):  # no sidecar, saving it, reading it
            argv = [part.format(a="a.json", b="b.json") for part in command]
            out = caliper(*argv, cwd=folder)
            assert out.returncode in (0, 1), out.stderr
            printed.append(out.stdout.replace(str(folder), "FOLDER"))
        assert printed[0] == printed[1] == printed[2], command
    assert records_cache.records_path(a).is_file() and records_cache.records_path(b).is_file()


def test_the_sidecar_is_a_cache_written_without_waiting_for_the_disk(tmp_path, monkeypatch):
    """The sidecar (22 MB for 50,000 attempts) is replaced atomically but not flushed to disk:
    a crash can only cut it short, which a read detects; the run file itself is flushed."""
    path = stored(tmp_path, varied_run())
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: synced.append(fd) or real_fsync(fd))
    load_run(path, transcripts=False)  # the first read saves the sidecar
    assert records_cache.records_path(path).is_file()
    assert synced == []
    write_output(tmp_path / "output.json", "{}")  # an output proper: file and folder flushed
    assert len(synced) == 2


def test_a_full_disk_while_saving_the_sidecar_loses_nothing(tmp_path, monkeypatch):
    """The disk fills while the sidecar is written: the read still gives the run, no sidecar
    nor temporary file is left, the run file is as it was, and a later read saves it."""
    import errno

    path = stored(tmp_path, varied_run())
    before = path.read_bytes()
    real_write = os.write

    def full(fd, data):
        if fd > 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    with monkeypatch.context() as patch:
        patch.setattr(os, "write", full)
        same(load_run(path, transcripts=False), plain(path))
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]
    assert path.read_bytes() == before
    same(load_run(path, transcripts=False), plain(path))
    assert records_cache.records_path(path).is_file()
