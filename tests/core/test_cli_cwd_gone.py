"""A command started in a folder that was deleted meanwhile: a clear error and exit 2 (not a
``FileNotFoundError`` and exit 70), through the real ``caliper`` script."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from caliper_fakeagent.harness import CALIPER, Workspace


@pytest.mark.parametrize(
    "args", [("run", "demo.eval.yaml", "--model", "fake"), ("list",), ("report",)]
)
def test_a_deleted_working_folder_is_a_clear_usage_error(tmp_path: Path, args) -> None:
    space = Workspace.create(tmp_path)
    gone = tmp_path / "gone"
    gone.mkdir()
    command = " ".join([str(CALIPER), *args])
    done = subprocess.run(
        ["/bin/sh", "-c", f'cd "{gone}" && rmdir "{gone}" && exec {command}'],
        env={**space.env(), "PWD": str(gone)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "no longer exists" in done.stderr and str(gone) in done.stderr
    assert "FileNotFoundError" not in done.stderr and "Traceback" not in done.stderr
