"""``caliper run`` as a demanding user meets it: activation of broken attempts, narrow
terminals, report panels, where results go when saving fails."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

import pytest
from test_results_support import caliper, run, snapshot, task

from caliper.results.models import Outcome
from caliper.results.scoring import activation_scoreboard
from caliper.results.store import save_run
from caliper_fakeagent.harness import CALIPER, Workspace

MIXED_SPEC = """\
    skills:
      - ./skills/alpha
    tasks:
      - name: Writes a greeting file for the user
        prompt: |
          fake: load alpha
          fake: write hello.txt hello
          fake: say done
        assert: |
          from pathlib import Path
          assert Path("hello.txt").read_text().strip() == "hello", "hello.txt is missing"
        activates: [alpha]
      - name: Fails its assertion after loading the skill
        prompt: |
          fake: load alpha
          fake: say nope
        assert: |
          from pathlib import Path
          assert Path("hello.txt").exists(), "hello.txt is missing"
      - name: Hits a rate limit after loading the skill
        prompt: |
          fake: load alpha
          fake: rate-limit
        activates: [alpha]
    """


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory):
    """One k=1 run: a pass, an assertion failure and an infra error that loaded a skill."""
    space = Workspace.create(tmp_path_factory.mktemp("ux-mixed"))
    space.skill("alpha")
    spec = space.spec(MIXED_SPEC)
    result = space.run(spec, "--k", "1")
    assert result.returncode == 0, result.stderr
    return space, result


def test_an_infra_error_keeps_the_loads_it_showed_and_is_not_scored(mixed):
    """A provider error cuts the transcript short: a load it shows happened and is kept, but
    the attempt never counts for activation (nothing loaded would be unknown, not [])."""
    _, result = mixed
    (attempt,) = result.attempts("Hits a rate limit after loading the skill")
    assert attempt["outcome"] == "infra_error"
    assert attempt["activated"] == ["alpha"]
    assert attempt["activation_passed"] is None


def test_activation_scoreboard_skips_unusable_attempts():
    """Older files may hold ``activated`` on an infra error; it never counts as evidence."""
    entry = task(
        "t",
        [Outcome.NOT_CHECKED, Outcome.INFRA_ERROR, Outcome.TIMEOUT],
        expected=["alpha"],
        activated=[["alpha"], [], ["alpha"]],
    )
    (board,) = activation_scoreboard(run([entry], skills=[snapshot("alpha")]))
    assert (board.skill, board.expected, board.fired, board.hits) == ("alpha", 1, 1, 1)


def _report(space: Workspace, path: Path | None, columns: str, *args: str) -> str:
    out = subprocess.run(
        [str(CALIPER), "report", str(path), *args],
        cwd=space.root,
        env=space.env(COLUMNS=columns),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("verbose", [(), ("--verbose",)])
def test_report_fits_80_columns_without_cutting_labels(mixed, verbose):
    space, result = mixed
    text = _report(space, result.results_path, "80", *verbose)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    for label in ("Task", "k (1)", "success", "activation", "Tokens", "Wall", "attempts"):
        assert label in text
    assert "✓ PASS" in text and "✗ FAIL" in text and "⊘ UNMEASURED" in text, text
    assert "…" not in text  # no header, number, status label or panel title cut short
    assert "infrastructure" in text and "(not counted)" in text


def test_report_uses_the_full_width_when_columns_allow(mixed):
    space, result = mixed
    text = _report(space, result.results_path, "140", "--verbose")
    row = next(line for line in text.splitlines() if "Writes a greeting file" in line)
    assert "Writes a greeting file for the user" in row  # one line, not wrapped
    assert "pass@k" in text and "pass^k" in text


def test_failure_panel_says_each_thing_once(mixed):
    space, result = mixed
    text = _report(space, result.results_path, "140")
    panel = text.split("Attempts that did not pass")[1]
    assert panel.count("hello.txt is missing") == 1
    assert "assert: failed\n" not in panel.replace("│", "").replace(" \n", "\n")


def test_activation_failure_is_said_once(tmp_path):
    space = Workspace.create(tmp_path)
    space.skill("alpha")
    spec = space.spec("""\
        skills: [./skills/alpha]
        tasks:
          - name: silence expected
            prompt: |
              fake: load alpha
              fake: say renamed
            activates: []
        """)
    result = space.run(spec, "--k", "1")
    assert result.returncode == 0, result.stderr
    panel = result.stdout.split("Attempts that did not pass")[1]
    assert panel.count("activates: failed") == 1, panel
    assert "activation: expected" not in panel  # the same verdict, said a second time


def test_output_copy_is_announced(tmp_path):
    space = Workspace.create(tmp_path)
    spec = space.spec(
        'tasks:\n  - name: t\n    prompt: "fake: say hi"\n    assert: "assert True"\n'
    )
    copy = tmp_path / "new" / "folder" / "run.json"
    result = space.run(spec, "--k", "1", "--output", str(copy))
    assert result.returncode == 0, result.stderr
    assert json.loads(copy.read_text()) == result.results
    assert f"A copy was saved to {copy}" in result.stdout


def _plain_spec(space: Workspace) -> Path:
    return space.spec(
        'tasks:\n  - name: t\n    prompt: "fake: say hi"\n    assert: "assert True"\n'
    )


def test_output_that_is_a_directory_fails_before_running(tmp_path):
    space = Workspace.create(tmp_path)
    spec = _plain_spec(space)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    result = space.run(spec, "--output", str(blocker / "run.json"))
    assert result.returncode == 2
    assert "is a file, so the results cannot be saved under it" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.results_path is None  # nothing ran, nothing saved


@pytest.fixture
def tiny_tmpfs(tmp_path: Path):
    """A 64 KiB tmpfs at ``tmp_path/mnt`` (skips when mounting is not allowed)."""
    mount = tmp_path / "mnt"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
        capture_output=True,
        timeout=10,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True, timeout=10, check=False)


def test_read_only_output_folder_fails_before_running(tmp_path, tiny_tmpfs):
    space = Workspace.create(tmp_path)
    spec = _plain_spec(space)
    (tiny_tmpfs / "sub").mkdir()
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_tmpfs)], check=True, timeout=10)
    result = space.run(spec, "--output", str(tiny_tmpfs / "sub" / "run.json"))
    assert result.returncode == 2
    assert f"the folder {tiny_tmpfs / 'sub'} is not writable" in result.stderr
    assert "Traceback" not in result.stderr


def test_full_disk_rescues_the_results_to_the_temp_folder(tmp_path, tiny_tmpfs):
    """The store is on a full disk: the report is still shown, the run is written to the
    temp folder, and the error says where (exit 1, no traceback)."""
    space = Workspace.create(tmp_path)
    project = tiny_tmpfs
    spec = project / "demo.eval.yaml"
    spec.write_text('tasks:\n  - name: t\n    prompt: "fake: say hi"\n    assert: "assert True"\n')
    (project / ".caliper" / "results" / "demo").mkdir(parents=True)
    fd = os.open(project / "filler", os.O_WRONLY | os.O_CREAT)
    try:  # fill the disk to the last byte
        for _ in range(1000):
            os.write(fd, b"\0" * 1024)
    except OSError:
        pass
    finally:
        os.close(fd)
    rescue_dir = tmp_path / "rescue"
    rescue_dir.mkdir()
    out = subprocess.run(
        [str(CALIPER), "run", str(spec), "--model", "fake", "--k", "1"],
        cwd=project,
        env=space.env(TMPDIR=str(rescue_dir)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    assert "the disk is full" in out.stderr
    (rescued,) = rescue_dir.glob("caliper-demo-*.json")
    assert f"saved to {rescued} instead" in out.stderr.replace("\n", " ")
    assert json.loads(rescued.read_text())["tasks"][0]["attempts"][0]["outcome"] == "pass"
    assert "✓ PASS" in out.stdout  # the report was still printed
    assert list((project / ".caliper" / "results" / "demo").iterdir()) == []


def test_a_render_crash_after_saving_keeps_the_file(tmp_path, monkeypatch, capsys):
    """A bug in the report must not lose the run or print a traceback."""
    from caliper import cli
    from caliper.report import run_view

    space = Workspace.create(tmp_path)
    spec = _plain_spec(space)
    for key, value in space.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(space.root)

    def broken(*_args, **_kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(run_view, "render_run", broken)
    code = cli.main(["run", str(spec), "--model", "fake", "--k", "1"])
    err = capsys.readouterr().err
    saved = space.latest_results()
    assert code == 1
    assert saved is not None and json.loads(saved.read_text())["tasks"][0]["name"] == "t"
    assert "Showing the report failed (ValueError: boom)" in err
    assert f"caliper report {saved}" in err
    assert "Traceback" not in err


def test_read_only_results_store_fails_before_running(tmp_path, tiny_tmpfs):
    """A spec on a read-only disk, run from there: nothing could be saved, so nothing runs."""
    space = Workspace.create(tmp_path)
    spec = tiny_tmpfs / "demo.eval.yaml"
    spec.write_text('tasks:\n  - name: t\n    prompt: "fake: say hi"\n    assert: "assert True"\n')
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_tmpfs)], check=True, timeout=10)
    out = subprocess.run(
        [str(CALIPER), "run", str(spec), "--model", "fake", "--k", "1"],
        cwd=tiny_tmpfs,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2, out.stderr
    assert f"the folder {tiny_tmpfs} is not writable" in out.stderr
    assert "Traceback" not in out.stderr
    assert not list(space.sandboxes.iterdir())  # no attempt was started


def test_verbose_panels_keep_pass_at_k_on_a_narrow_terminal(tmp_path):
    """Under 110 columns pass@k / pass^k live only in the --verbose panel titles: a long task
    name must not push them out of sight."""
    space = Workspace.create(tmp_path)
    name = "A task whose name is long enough to fill most of an eighty column terminal"
    spec = space.spec(
        f'tasks:\n  - name: "{name}"\n    prompt: "fake: say hi"\n    assert: "assert True"\n'
    )
    result = space.run(spec, "--k", "2")
    assert result.returncode == 0, result.stderr
    text = _report(space, result.results_path, "80", "--verbose")
    assert "pass@k 100.0%, pass^k 100.0%" in text
    assert "…" not in text


def test_compare_fits_80_columns_with_k_10(tmp_path):
    """Ten-glyph strips and before → after figures are never cut on a narrow terminal."""
    project = tmp_path
    name = "a task with a fairly long descriptive name"
    before = run([task(name, [Outcome.PASS] * 10)], run_id="2026-11-30T18-00-00Z", k=10)
    after = run([task(name, [Outcome.TASK_FAIL] * 10)], run_id="2026-11-30T19-00-00Z", k=10)
    paths = []
    for results in (before, after):
        with _chdir(project):
            paths.append(save_run(results, spec_path=project / "demo.eval.yaml"))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    out = caliper(
        "compare", str(paths[0]), str(paths[1]), cwd=project, env={**env, "COLUMNS": "80"}
    )
    assert out.returncode == 1, out.stderr
    assert "✓" * 10 + " → " + "✗" * 10 in out.stdout
    assert "100.0% → 0.0%" in out.stdout
    assert "…" not in out.stdout
    assert max(len(line) for line in out.stdout.splitlines()) <= 80


@contextlib.contextmanager
def _chdir(path: Path):
    previous = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)
