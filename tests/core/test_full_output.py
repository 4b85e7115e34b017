"""Output that cannot be written because the disk is full is one clear message and exit 74,
never "failed unexpectedly" or a traceback, through the real ``caliper`` script."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CALIPER = Path(sys.executable).parent / "caliper"
STORED_RUN = Path(__file__).parent / "stored" / "judged-run-before-typed-judge-fields.json"

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


@pytest.mark.parametrize(
    "args",
    [["--help"], ["plugins"], ["validate", "{spec}"], ["report", str(STORED_RUN)]],
    ids=["help", "plugins", "validate", "report"],
)
def test_a_full_standard_output_is_one_message_and_exit_74(tmp_path, args):
    spec = tmp_path / "s.eval.yaml"
    spec.write_text("tasks:\n  - name: t\n    prompt: hi\n    assert: assert True\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [str(CALIPER), *(a.format(spec=spec) for a in args)],
            stdout=full,
            stderr=subprocess.PIPE,
            env=env,
            cwd=tmp_path,
            text=True,
            timeout=60,
        )
    assert done.returncode == 74, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "no space left" in lines[0] and "could not write the output" in lines[0]
    assert "unexpectedly" not in done.stderr and "Traceback" not in done.stderr
    assert "Exception ignored" not in done.stderr
