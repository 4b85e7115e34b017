"""A run reads what it needs once, at the start: deleting the spec or the current folder, or
editing the spec or an assert file mid-run, neither loses the run nor changes what is saved
(issue 11, item 9). Real ``caliper run`` with the fake agent."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import time
from pathlib import Path

from caliper_fakeagent.harness import CALIPER, Workspace


def _wait_for(path: Path, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert path.exists(), f"{path} never appeared"


def _spec(space: Workspace, started: Path) -> Path:
    """Attempt 1 signals it started then waits; the spec uses an assert file."""
    (space.root / "check.py").write_text("assert open('out.txt').read() == 'ok\\n'\n")
    return space.spec(f"""\
        tasks:
          - name: slow
            prompt: |
              fake: bash touch {started}
              fake: sleep 1.5
              fake: write out.txt ok
            assert: check.py
        """)


def test_deleting_the_spec_mid_run_keeps_the_run_and_its_hash(tmp_path):
    space = Workspace.create(tmp_path)
    started = tmp_path / "started"
    spec = _spec(space, started)
    original = hashlib.sha256(spec.read_bytes()).hexdigest()
    process = space.start(spec, "--k", "2", "--workers", "1")
    _wait_for(started)
    spec.unlink()
    (space.root / "check.py").unlink()
    run = space.finish(process)
    assert run.returncode == 0, run.stderr
    assert [a["outcome"] for a in run.attempts("slow")] == ["pass", "pass"]
    assert run.results["meta"]["spec_hash"] == original


def test_editing_the_spec_mid_run_saves_the_original_hash(tmp_path):
    space = Workspace.create(tmp_path)
    started = tmp_path / "started"
    spec = _spec(space, started)
    original = hashlib.sha256(spec.read_bytes()).hexdigest()
    process = space.start(spec, "--k", "2", "--workers", "1")
    _wait_for(started)
    spec.write_text(spec.read_text() + "# edited while running\n")
    (space.root / "check.py").write_text("assert False, 'edited assert file'\n")
    run = space.finish(process)
    assert run.returncode == 0, run.stderr
    assert run.results["meta"]["spec_hash"] == original
    assert [a["outcome"] for a in run.attempts("slow")] == ["pass", "pass"]


def test_deleting_the_current_folder_mid_run_keeps_the_run(tmp_path):
    space = Workspace.create(tmp_path)
    started = tmp_path / "started"
    spec = _spec(space, started)
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    process = subprocess.Popen(
        [str(CALIPER), "run", str(spec), "--model", "fake", "--k", "2", "--workers", "1"],
        cwd=cwd,
        env=space.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_for(started)
    shutil.rmtree(cwd)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert "Traceback" not in stderr
    # no .caliper/ at or above the deleted folder: the run went beside the spec
    (saved,) = (space.root / ".caliper" / "results" / "demo").glob("*.json")
    assert str(saved) in stdout.replace("\n", "")
    assert not cwd.exists(), "the deleted folder was created again"
