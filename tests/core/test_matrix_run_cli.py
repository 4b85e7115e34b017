"""Many engines in one run (issue 18): ``caliper run SPEC --model A --model B`` through the real
``caliper`` script with the fake backend under two models. One saved run per engine, tied by
``meta.matrix``; judges follow each engine unless ``--judge-model``; every engine is checked
before any attempt; the exit code is the worst over the engines."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from caliper_fakeagent.harness import CALIPER, Workspace

ONE, TWO = "fake", "fake:fake-model-2"
# "differs" passes on fake-model-1 only: a difference the matrix must call significant
SPEC = """\
    tasks:
      - name: differs
        prompt: |
          fake: only-model fake-model-1 write out.txt yes
          fake: say done
        assert: "import os; assert os.path.exists('out.txt')"
      - name: judged
        prompt: "fake: say hello there"
        expect: "Says hello (fake-judge: pass)"
    """


def _caliper(space: Workspace, *args: str, env: dict[str, str] | None = None):
    return subprocess.run(
        [str(CALIPER), *args],
        cwd=space.root,
        env=env or space.env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _runs(space: Workspace) -> list[dict[str, Any]]:
    folder = space.root / ".caliper" / "results" / "demo"
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path)


def test_two_engines_in_one_run_save_one_run_each_tied_by_a_matrix_id(space: Workspace) -> None:
    spec = space.spec(SPEC)
    done = _caliper(
        space, "run", str(spec), "--model", ONE, "--model", TWO, "--k", "8", "--workers", "3"
    )
    assert done.returncode == 0, done.stderr
    runs = _runs(space)
    assert len(runs) == 2
    assert not list((space.root / ".caliper").rglob("*.journal.jsonl"))
    metas = {run["meta"]["matrix"]["engine"]: run["meta"] for run in runs}
    assert set(metas) == {ONE, TWO}
    ids = {meta["matrix"]["id"] for meta in metas.values()}
    assert len(ids) == 1
    (matrix_id,) = ids
    assert all(meta["matrix"]["engines"] == [ONE, TWO] for meta in metas.values())
    assert metas[ONE]["run_id"] != metas[TWO]["run_id"]
    assert metas[ONE]["model"] == "fake-model-1" and metas[TWO]["model"] == "fake-model-2"
    assert metas[ONE]["requested_model"] == ONE and metas[TWO]["requested_model"] == TWO
    # no --judge-model: each engine's judge follows that engine
    assert metas[ONE]["judge_model"] == "fake-model-1"
    assert metas[TWO]["judge_model"] == "fake-model-2"
    by_engine = {run["meta"]["matrix"]["engine"]: run for run in runs}
    for engine, run in by_engine.items():
        for task in run["tasks"]:
            assert [a["attempt"] for a in task["attempts"]] == list(range(1, 9))
        differs = next(t for t in run["tasks"] if t["name"] == "differs")
        want = "pass" if engine == ONE else "task_fail"
        assert {a["outcome"] for a in differs["attempts"]} == {want}
    # the run prints the engines side by side and how to see the matrix again
    assert f"caliper report --matrix {matrix_id}" in done.stdout
    one_run = _caliper(space, "report", f"demo/{metas[ONE]['run_id']}")
    assert f"matrix {matrix_id}" in one_run.stdout  # each run's own report names its matrix
    assert "significant" in done.stdout
    shown = json.loads(_caliper(space, "report", "--matrix", matrix_id, "--format", "json").stdout)
    assert [e["engine"] for e in shown["engines"]] == [ONE, TWO]
    differs = next(d for d in shown["differences"] if d["task"] == "differs")
    assert differs["delta"] == -1.0 and differs["significant"] is True
    judged = next(d for d in shown["differences"] if d["task"] == "judged")
    assert judged["significant"] is False


def test_judge_model_applies_to_every_engine(space: Workspace) -> None:
    spec = space.spec(SPEC)
    done = _caliper(
        space,
        "run",
        str(spec),
        "--model",
        ONE,
        "--model",
        TWO,
        "--k",
        "1",
        "--judge-model",
        "fake:fake-judge-9",
    )
    assert done.returncode == 0, done.stderr
    assert {run["meta"]["judge_model"] for run in _runs(space)} == {"fake-judge-9"}


def test_worst_exit_code_over_engines_with_bars_and_unusable(space: Workspace) -> None:
    spec = space.spec(SPEC)
    gated = _caliper(
        space, "run", str(spec), "--model", ONE, "--model", TWO, "--k", "4",
        "--min-score", "differs=0.3",
    )  # fmt: skip
    assert gated.returncode == 3, gated.stdout + gated.stderr
    assert f"--model {TWO}: Gate failed" in gated.stderr
    assert "--model fake: Gate failed" not in gated.stderr
    assert "Traceback" not in gated.stderr

    broken = space.spec(
        """\
        tasks:
          - name: crashes on two
            prompt: |
              fake: only-model fake-model-2 exit 3
              fake: say fine
            assert: "assert True"
        """,
        name="broken",
    )
    done = _caliper(
        space, "run", str(broken), "--model", ONE, "--model", TWO, "--k", "2", "--retries", "0"
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"--model {TWO}: every attempt was unusable" in done.stderr
    assert "--model fake: " not in done.stderr


def test_every_engine_is_checked_before_any_attempt(space: Workspace) -> None:
    spec = space.spec(SPEC)
    env = space.env(
        CALIPER_LOAD_PLUGINS="fake,claude-code,assert,activates,expect",
        PATH=os.pathsep.join(["/usr/bin", "/bin"]),  # no claude CLI here
    )
    done = _caliper(space, "run", str(spec), "--model", ONE, "--model", "claude-code", env=env)
    assert done.returncode == 3, done.stdout + done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(lines) == 1 and lines[0].startswith("Error: --model claude-code:")
    assert not (space.root / ".caliper" / "results").exists() or not _runs(space)
    assert list(space.sandboxes.iterdir()) == [], "no attempt started"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--model", ONE), "--model fake is given twice"),
        (("--resume",), "--resume cannot be combined with several --model"),
        (("--output", "x.json"), "--output cannot be combined with several --model"),
        (("--junit", "j.xml"), "--junit cannot be combined with several --model"),
    ],
)
def test_matrix_misuse_is_a_usage_error(space: Workspace, extra, message) -> None:
    spec = space.spec(SPEC)
    done = _caliper(space, "run", str(spec), "--model", ONE, "--model", TWO, *extra)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr


def test_interleave_gives_every_engine_a_turn() -> None:
    from caliper.plugin.executor import AttemptJob
    from caliper.runner.matrix import interleave

    jobs = {
        "a": [AttemptJob("t", n, "a", "x") for n in (1, 2, 3)],
        "b": [AttemptJob("t", n, "b", "y") for n in (1,)],
    }
    order = [(job.engine_key, job.number) for job in interleave(jobs)]
    assert order == [("a", 1), ("b", 1), ("a", 2), ("a", 3)]


def test_both_engines_attempts_run_in_one_pool(space: Workspace, tmp_path: Path) -> None:
    """One attempt per engine meets at a barrier: each waits (up to 10 s) until both started,
    which only happens when both engines' attempts are in the same pool at the same time."""
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    wait = (
        f"touch {barrier}/$$; i=0; "
        f"while [ $(ls {barrier} | wc -l) -lt 2 ] && [ $i -lt 100 ]; "
        "do sleep 0.1; i=$((i+1)); done; "
        f"ls {barrier} | wc -l"
    )
    spec = space.spec(f"""\
        tasks:
          - name: meet
            prompt: |
              fake: bash {wait}
            assert: "assert True"
        """)
    done = _caliper(
        space, "run", str(spec), "--model", ONE, "--model", TWO, "--k", "1", "--workers", "2"
    )
    assert done.returncode == 0, done.stderr
    seen = [
        run["tasks"][0]["attempts"][0]["transcript"][0]["tool_output"].strip()
        for run in _runs(space)
    ]
    assert seen == ["2", "2"], "the engines' attempts did not overlap in time"


def test_ctrl_c_saves_every_engines_finished_attempts_as_partial_runs(space: Workspace) -> None:
    spec = space.spec("""\
        tasks:
          - name: quick
            prompt: "fake: say quick"
            assert: "assert True"
          - name: slow
            prompt: "fake: sleep 60"
            assert: "assert True"
        """)
    process = subprocess.Popen(
        [str(CALIPER), "run", str(spec), "--model", ONE, "--model", TWO, "--k", "1"],
        cwd=space.root,
        env=space.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        journals: list[Path] = []
        while time.monotonic() < deadline:
            journals = list((space.root / ".caliper").rglob("*.journal.jsonl"))
            lines = [j.read_text(encoding="utf-8").count('{"attempt"') for j in journals]
            if len(journals) == 2 and all(count >= 1 for count in lines):
                break  # each engine's quick attempt is journaled; the slow ones are running
            time.sleep(0.05)
        else:
            raise AssertionError("the quick attempts never finished")
    finally:
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert "Interrupted" in err and "Traceback" not in err
    runs = _runs(space)
    assert len(runs) == 2
    assert not list((space.root / ".caliper").rglob("*.journal.jsonl"))
    for run in runs:
        assert run["meta"]["partial"] is True and "interrupted" in run["meta"]["stop_reason"]
        quick = next(t for t in run["tasks"] if t["name"] == "quick")
        assert [a["outcome"] for a in quick["attempts"]] == ["pass"]
    assert list(space.sandboxes.iterdir()) == []


def test_a_sharded_matrix_shards_every_engines_run(space: Workspace) -> None:
    spec = space.spec(SPEC)
    for index in (1, 2):
        done = _caliper(
            space, "run", str(spec), "--model", ONE, "--model", TWO, "--k", "3",
            "--shard", f"{index}/2",
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    runs = _runs(space)
    assert len(runs) == 4
    for engine in (ONE, TWO):
        mine = [r for r in runs if r["meta"]["matrix"]["engine"] == engine]
        assert sorted(r["meta"]["shard"]["index"] for r in mine) == [1, 2]
        folder = space.root / ".caliper" / "results" / "demo"
        paths = [str(folder / f"{r['meta']['run_id']}.json") for r in mine]
        merged = _caliper(space, "merge", *paths)
        assert merged.returncode == 0, merged.stderr
    other = next(r for r in runs if r["meta"]["matrix"]["engine"] == TWO)
    first = next(r for r in runs if r["meta"]["matrix"]["engine"] == ONE)
    folder = space.root / ".caliper" / "results" / "demo"
    mixed = _caliper(
        space,
        "merge",
        str(folder / f"{first['meta']['run_id']}.json"),
        str(folder / f"{other['meta']['run_id']}.json"),
    )
    assert mixed.returncode == 2 and "differ in engine" in mixed.stderr


def test_progress_has_a_line_per_engine_and_task() -> None:
    from types import SimpleNamespace

    from rich.console import Console

    from caliper.results.models import AttemptRecord, Outcome
    from caliper.runner.matrix_progress import MatrixProgress

    console = Console(record=True, force_terminal=True, width=100)
    tasks = [SimpleNamespace(name="alpha"), SimpleNamespace(name="beta")]
    progress = MatrixProgress([ONE, TWO], tasks, 3, console=console)
    progress.attempt_done(TWO, AttemptRecord(task_name="beta", attempt=1, outcome=Outcome.PASS))
    progress.task_aborted(ONE, "alpha")
    console.print(progress._table())
    text = console.export_text()
    rows = [line.split() for line in text.splitlines() if line.strip()]
    assert rows[0] == ["engine", "task", "attempts", "pass", "fail", "unusable"]
    assert ["fake", "alpha", "0/3", "aborted", "0", "0", "0"] in rows
    assert ["fake:fake-model-2", "beta", "1/3", "1", "0", "0"] in rows
    assert len(rows) == 5


def test_a_matrix_whose_agent_never_started_keeps_no_run_and_says_so_once(space: Workspace):
    spec = space.spec("""\
        tasks:
          - name: t
            prompt: "fake: auth-fail"
            assert: "assert True"
        """)
    done = _caliper(space, "run", str(spec), "--model", ONE, "--model", TWO, "--k", "2")
    out = done.stdout + done.stderr
    assert done.returncode == 3, out
    assert done.stderr.count("No attempt got started, so nothing was saved.") == 1, out
    assert "not saved (no attempt got started" in done.stdout, out
    assert not _runs(space)
