"""How a matrix run ends on the command line: the same path as one run (the report shown
safely, each engine's exit decided by ``RunEnding.problem()``), the matrix leaving with every
engine's problem once and the worst code."""

from __future__ import annotations

import json
from pathlib import Path

from caliper.errors import CaliperError, SetupError
from caliper.runner.run.ending import RunInterrupted
from caliper_fakeagent.harness import Workspace

ONE, TWO = "fake", "fake:fake-model-2"


def _render_crash(*_args, **_kwargs) -> None:
    raise ValueError("boom")


def test_a_matrix_render_crash_names_every_saved_run(tmp_path: Path, monkeypatch, capsys):
    """A bug in the matrix view must not lose the runs or print a traceback (before: the
    matrix printed its report unguarded, so this was a crash with exit 70)."""
    from caliper import cli
    from caliper.report import matrix_view

    space = Workspace.create(tmp_path)
    spec = space.spec(
        'tasks:\n  - name: t\n    prompt: "fake: say hi"\n    assert: "assert True"\n'
    )
    monkeypatch.chdir(space.root)
    for key, value in space.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(matrix_view, "render_matrix", _render_crash)
    code = cli.main(["run", str(spec), "--model", ONE, "--model", TWO, "--k", "1"])
    err = capsys.readouterr().err
    saved = sorted((space.root / ".caliper" / "results" / "demo").glob("*.json"))
    assert code == 1
    assert len(saved) == 2
    assert {json.loads(p.read_text())["meta"]["matrix"]["engine"] for p in saved} == {ONE, TWO}
    assert "Showing the report failed (ValueError: boom)" in err
    flat = " ".join(err.split())
    assert all(str(path) in flat for path in saved)
    assert "Traceback" not in err


def test_worst_names_each_distinct_problem_once_with_the_highest_code() -> None:
    from caliper.commands.run_matrix import worst

    assert worst([]) is None
    shared = SetupError("The fake CLI cannot log in.")
    alone = worst([shared, shared])
    assert alone is shared  # what stopped every engine, said once and as it is
    gate = CaliperError("--model fake: Gate failed: 1 of 1 bar not met.", exit_code=3)
    lost = CaliperError("--model fake:fake-model-2: results not saved.", exit_code=1)
    both = worst([lost, gate])
    assert both is not None and type(both) is CaliperError
    assert both.message.splitlines() == [lost.message, gate.message]
    assert both.exit_code == 3


def test_worst_keeps_a_signal_so_its_code_survives_a_closed_terminal() -> None:
    from caliper.commands.run_matrix import worst

    stop = "Stopped by SIGTERM: the attempts that finished were saved as a partial run."
    signals = [RunInterrupted(stop, exit_code=143), RunInterrupted(stop, exit_code=143)]
    lost = CaliperError("--model fake: results not saved.", exit_code=1)
    ended = worst([*signals, lost])
    assert isinstance(ended, RunInterrupted)
    assert ended.exit_code == 143
    assert ended.message.splitlines() == [stop, lost.message]


def test_matrix_progress_builds_its_table_on_its_clock_not_per_attempt(monkeypatch) -> None:
    """A matrix of 50 tasks on 2 engines rebuilt its 100-row table after every attempt."""
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from caliper.results.models import AttemptRecord, Outcome
    from caliper.runner.matrix_progress import MatrixProgress

    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    tasks = [SimpleNamespace(name=f"t{i}") for i in range(50)]
    built = []
    real = MatrixProgress._table
    monkeypatch.setattr(MatrixProgress, "_table", lambda self: built.append(1) or real(self))
    with MatrixProgress([ONE, TWO], tasks, 5, console=console) as progress:
        for n in range(500):
            record = AttemptRecord(task_name=f"t{n % 50}", attempt=n, outcome=Outcome.PASS)
            progress.attempt_done((ONE, TWO)[(n // 50) % 2], record)
    assert 0 < len(built) < 50  # drawn a few times a second, not 500 times
    assert "5/5" in console.file.getvalue()  # the last drawing has every count
