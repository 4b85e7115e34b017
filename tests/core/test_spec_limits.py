"""Specs that are not regular files, oversized specs and very big legitimate specs (issue 11
item 13), through the real ``caliper`` script."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

MAX_FILE_BYTES = 8 * 1024 * 1024  # docs/spec.md, Limits

CALIPER = Path(sys.executable).parent / "caliper"


def caliper(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(cwd), "LANG": "C.UTF-8"}
    return subprocess.run(
        [str(CALIPER), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_fifo_spec_is_refused_at_once(tmp_path, command):
    fifo = tmp_path / "spec.eval.yaml"
    os.mkfifo(fifo)
    done = caliper(command, str(fifo), cwd=tmp_path, timeout=20)  # before: blocked forever
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "is a named pipe (FIFO), not a regular file" in output
    assert "Traceback" not in output


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_an_endless_device_is_refused_without_reading_it(tmp_path, command, device):
    # before: read until the machine ran out of memory; the timeout and a 1 GiB address
    # space limit keep a regression from taking the machine with it
    limit = 'ulimit -v 1048576; exec "$@"'
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    done = subprocess.run(
        ["sh", "-c", limit, "sh", str(CALIPER), command, device],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "is a device, not a regular file" in output


def test_an_oversized_spec_is_refused_with_the_limit(tmp_path):
    spec = tmp_path / "huge.eval.yaml"
    with spec.open("w") as handle:
        handle.write("tasks: []\n")
        line = "# " + "x" * 1022 + "\n"
        for _ in range(MAX_FILE_BYTES // len(line) + 1):
            handle.write(line)
    done = caliper("validate", str(spec), cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is larger than 8 MiB" in done.stdout


def test_a_50000_task_spec_is_valid_and_quick(tmp_path):
    lines = ["tasks:"]
    for i in range(50_000):
        lines += [f"  - name: task number {i}", f"    prompt: do thing {i}", "    assert: x = 1"]
    spec = tmp_path / "big.eval.yaml"
    spec.write_text("\n".join(lines) + "\n")
    start = time.monotonic()
    done = caliper("validate", str(spec), cwd=tmp_path, timeout=120)
    took = time.monotonic() - start
    assert done.returncode == 0, done.stdout + done.stderr  # before: "too many aliases?"
    assert "valid: 50000 tasks" in done.stdout
    assert took < 60, f"validate took {took:.1f} s"
