"""The results store: where runs go, run ids, atomic writes, loading and run references."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_results_support import F, P, run, task

from caliper.results import codec
from caliper.results.store import (
    ResultsError,
    ResultsWriteError,
    caliper_root,
    latest_run,
    list_runs,
    load_run,
    new_run_id,
    resolve_run_ref,
    run_sort_key,
    save_run,
)

SUPPORT_DIR = Path(__file__).parent


def make_spec(folder: Path, name: str = "demo") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / f"{name}.eval.yaml"
    spec.write_text("tasks: []\n")
    return spec


def leftovers(folder: Path) -> list[str]:
    """Hidden files left in ``folder``: temporary files, not the per-run summaries saved
    beside each run (``.RUN.json.summary``, each checked to belong to a run file)."""
    found = []
    for p in folder.rglob("*"):
        if not (p.is_file() and p.name.startswith(".")):
            continue
        if p.name.endswith(".json.summary") and (p.parent / p.name[1 : -len(".summary")]).is_file():
            continue
        found.append(p.name)
    return sorted(found)


def test_new_run_id_is_a_utc_timestamp():
    when = datetime.datetime(
        2026, 11, 30, 19, 1, 33, tzinfo=datetime.timezone(datetime.timedelta(hours=1))
    )
    assert new_run_id(when) == "2026-11-30T18-01-33Z"


def test_same_second_runs_never_overwrite(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    spec = make_spec(tmp_path)
    paths = [save_run(run([task("t", [P])]), spec_path=spec) for _ in range(3)]
    assert [p.name for p in paths] == [
        "2026-11-30T18-01-33Z.json",
        "2026-11-30T18-01-33Z-2.json",
        "2026-11-30T18-01-33Z-3.json",
    ]
    assert [load_run(p).meta.run_id for p in paths] == [p.stem for p in paths]
    assert paths[0].parent == tmp_path / ".caliper" / "results" / "demo"
    assert leftovers(tmp_path) == []


def test_run_id_comes_from_the_start_time_when_not_a_timestamp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    results = run([task("t", [P])], run_id="20261130T180133Z-abc123")
    results.meta.started_at = "2026-11-30T20:15:00+02:00"
    path = save_run(results, spec_path=make_spec(tmp_path))
    assert path.name == "2026-11-30T18-15-00Z.json"
    assert results.meta.run_id == "2026-11-30T18-15-00Z"


def test_output_gets_a_second_copy(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "exports" / "latest.json"
    path = save_run(run([task("t", [P])]), spec_path=make_spec(tmp_path), output=out)
    assert out.read_text() == path.read_text()


def test_ids_sort_by_time_then_suffix():
    ids = ["2026-11-30T18-01-33Z-10", "2026-11-30T18-01-33Z", "2026-11-30T18-01-33Z-9"]
    assert sorted(ids, key=run_sort_key) == [
        "2026-11-30T18-01-33Z",
        "2026-11-30T18-01-33Z-9",
        "2026-11-30T18-01-33Z-10",
    ]


FAILING_SAVE = """
import resource, signal, sys
from pathlib import Path
sys.path.insert(0, {support!r})
from test_results_support import P, run, task
from caliper.results.store import ResultsWriteError, save_run
results = run([task("t", [P], final_answer="x" * 200_000)])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    save_run(results, spec_path=Path("demo.eval.yaml"))
except ResultsWriteError as exc:
    print(exc.render())
    sys.exit(7)
"""


def test_a_failed_write_leaves_nothing_behind(tmp_path):
    make_spec(tmp_path)
    proc = subprocess.run(
        [sys.executable, "-c", FAILING_SAVE.format(support=str(SUPPORT_DIR))],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 7, proc.stderr
    assert "Could not save results to" in proc.stdout
    assert "the file is larger than allowed" in proc.stdout
    folder = tmp_path / ".caliper" / "results" / "demo"
    assert folder.is_dir()
    assert list(folder.iterdir()) == []


def test_a_file_in_the_way_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".caliper").mkdir()
    (tmp_path / ".caliper" / "results").write_text("not a folder")
    with pytest.raises(ResultsWriteError, match=r"Could not save results to .*demo"):
        save_run(run([task("t", [P])]), spec_path=make_spec(tmp_path))


def test_root_is_the_nearest_caliper_dir_at_or_above(tmp_path):
    (tmp_path / ".caliper").mkdir()
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    spec = make_spec(tmp_path / "specs")
    assert caliper_root(deep, spec) == (tmp_path / ".caliper").resolve()
    (deep / ".caliper").mkdir()
    assert caliper_root(deep, spec) == (deep / ".caliper").resolve()


def test_root_falls_back_beside_the_spec(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    spec = make_spec(tmp_path / "project")
    assert caliper_root(elsewhere, spec) == (tmp_path / "project" / ".caliper").resolve()
    assert not (tmp_path / "project" / ".caliper").exists()  # created only when saving


def test_no_root_and_no_spec_is_a_clear_error(tmp_path):
    with pytest.raises(ResultsError, match=r"No \.caliper/ directory at or above"):
        caliper_root(tmp_path, None)


def test_run_list_report_agree_from_different_cwds(tmp_path, monkeypatch):
    project = tmp_path / "project"
    spec = make_spec(project / "evals")
    monkeypatch.chdir(tmp_path)  # no .caliper here: the run lands beside the spec
    saved = save_run(run([task("t", [P])]), spec_path=Path("project/evals/demo.eval.yaml"))
    assert saved.parent == (project / "evals" / ".caliper" / "results" / "demo").resolve()
    assert resolve_run_ref("project/evals/demo.eval.yaml", cwd=tmp_path) == saved
    # from inside the project folder the same spec and its name resolve to the same run
    assert resolve_run_ref(str(spec), cwd=project / "evals") == saved
    assert resolve_run_ref("demo", cwd=project / "evals") == saved
    # a later run from a sub-folder reuses the .caliper above it
    sub = project / "evals" / "sub"
    sub.mkdir()
    monkeypatch.chdir(sub)
    second = save_run(run([task("t", [F])]), spec_path=spec)
    assert second.parent == saved.parent
    assert latest_run(saved.parents[2], "demo").path == second


def test_list_runs_by_spec_and_all(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    a = make_spec(tmp_path, "alpha")
    b = make_spec(tmp_path, "beta")
    save_run(run([task("t", [P])], spec_name="alpha"), spec_path=a)
    save_run(run([task("t", [P])], spec_name="alpha", run_id="2026-12-01T00-00-00Z"), spec_path=a)
    save_run(run([task("t", [P])], spec_name="beta"), spec_path=b)
    (tmp_path / ".caliper" / "results" / "alpha" / ".2026.json.tmp").write_text("")
    # an empty name reserved by a save still in progress is not a run yet
    (tmp_path / ".caliper" / "results" / "alpha" / "2026-12-02T00-00-00Z.json").write_text("")
    root = tmp_path / ".caliper"
    assert [e.run_id for e in list_runs(root, "alpha")] == [
        "2026-11-30T18-01-33Z",
        "2026-12-01T00-00-00Z",
    ]
    assert {e.spec_name for e in list_runs(root)} == {"alpha", "beta"}
    assert latest_run(root).spec_name == "alpha"
    assert list_runs(root, "nope") == []


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{broken", "not a readable caliper results file: it is not valid JSON"),
        ('{"hello": 1}', "not a caliper results file"),
        ("", "is empty"),
    ],
)
def test_load_run_explains_bad_files(tmp_path, content, needle):
    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(ResultsError, match=needle) as info:
        load_run(path)
    assert info.value.exit_code == 2


def test_load_run_missing_file(tmp_path):
    with pytest.raises(ResultsError, match="No results file at"):
        load_run(tmp_path / "gone.json")


def test_saved_file_is_plain_json(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = save_run(run([task("t", [P])]), spec_path=make_spec(tmp_path))
    data = json.loads(path.read_text())
    assert data["meta"]["spec_name"] == "demo"
    assert codec.from_data(data).tasks[0].attempts[0].passed
    assert oct(os.stat(path).st_mode & 0o777) == "0o644"


def test_resolve_run_ref_errors_list_what_exists(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    save_run(run([task("t", [P])], spec_name="commit-writer"), spec_path=make_spec(tmp_path))
    with pytest.raises(ResultsError) as info:
        resolve_run_ref("commit-writter", cwd=tmp_path)
    text = info.value.render()
    assert "No saved run for spec 'commit-writter'" in text
    assert "Did you mean 'commit-writer'?" in text
    assert "Specs with saved runs" in text and "commit-writer" in text
    with pytest.raises(ResultsError, match="No results file at"):
        resolve_run_ref("missing.json", cwd=tmp_path)
    with pytest.raises(ResultsError, match="No saved run for spec"):
        resolve_run_ref("other.eval.yaml", cwd=tmp_path)


def test_resolve_run_ref_accepts_a_results_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = save_run(run([task("t", [P])]), spec_path=make_spec(tmp_path))
    relative = path.relative_to(tmp_path)
    assert resolve_run_ref(str(relative), cwd=tmp_path) == tmp_path / relative


def test_a_failed_output_copy_says_the_main_copy_exists(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "taken").write_text("a file, not a folder")
    with pytest.raises(ResultsWriteError) as info:
        save_run(
            run([task("t", [P])]), spec_path=make_spec(tmp_path), output=tmp_path / "taken" / "x"
        )
    assert "Results were saved to" in info.value.message
    assert "--output copy failed" in info.value.message
    saved = (tmp_path / ".caliper" / "results" / "demo").iterdir()
    assert len([p for p in saved if not p.name.endswith(".summary")]) == 1


def test_load_run_on_a_folder(tmp_path):
    with pytest.raises(ResultsError, match="is a folder, not a results file"):
        load_run(tmp_path)


def test_too_many_runs_in_one_second(tmp_path, monkeypatch):
    import caliper.results.store as store

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(store, "MAX_SAME_SECOND", 2)
    spec = make_spec(tmp_path)
    save_run(run([task("t", [P])]), spec_path=spec)
    save_run(run([task("t", [P])]), spec_path=spec)
    with pytest.raises(ResultsWriteError, match="2 runs already use the id 2026-11-30T18-01-33Z"):
        save_run(run([task("t", [P])]), spec_path=spec)


def _saved(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    spec = make_spec(tmp_path)
    return save_run(run([task("t", [P, F])], spec_name="demo"), spec_path=spec)


def test_load_run_data_reads_and_parses_the_file_once(tmp_path, monkeypatch):
    # resume, retry and regrade read a run's stored data: it used to be decoded whole, then
    # read and parsed a second time (issue 20)
    path = _saved(tmp_path, monkeypatch)
    parses = []
    real_loads = json.loads
    monkeypatch.setattr(json, "loads", lambda *a, **k: parses.append(1) or real_loads(*a, **k))
    from caliper.results.store import load_run_data

    data = load_run_data(path)
    assert len(parses) == 1
    assert data == real_loads(path.read_text())  # the stored form, unchanged


@pytest.mark.parametrize(
    "content",
    [
        "{broken",
        '{"hello": 1}',
        "",
        '{"meta": {"run_id": "r", "spec_name": "s", "spec_path": "s", "started_at": "t"},'
        ' "tasks": [{"name": "t", "index": "zero", "k": 1}]}',
    ],
)
def test_load_run_data_refuses_what_load_run_refuses_with_its_message(tmp_path, content):
    from caliper.results.store import load_run_data

    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(ResultsError) as plain:
        load_run(path)
    with pytest.raises(ResultsError) as stored:
        load_run_data(path)
    assert (stored.value.message, stored.value.hint) == (plain.value.message, plain.value.hint)


def test_decoding_leaves_the_garbage_collector_as_it_was(tmp_path, monkeypatch):
    import gc

    path = _saved(tmp_path, monkeypatch)
    assert gc.isenabled()
    load_run(path)
    assert gc.isenabled()
    gc.disable()
    try:
        load_run(path, transcripts=False)
        assert not gc.isenabled()
    finally:
        gc.enable()
