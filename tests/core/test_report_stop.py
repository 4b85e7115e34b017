"""Ctrl-C while ``caliper run`` draws its end-of-run report stops it: exit 130 at once, the
results already saved and named. Through the real ``caliper`` script with the fake backend, on
a spec big enough that drawing the report of the stopped run takes a while."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from caliper_fakeagent.harness import CALIPER, Workspace

pytestmark = pytest.mark.slow

TASKS = 15_000


def _wait_for_results(root: Path, deadline: float) -> Path:
    while time.monotonic() < deadline:
        for path in root.glob(".caliper/results/demo/*.json"):
            if path.stat().st_size > 0:
                return path
        time.sleep(0.02)
    raise AssertionError("the stopped run saved no results")


def test_ctrl_c_during_the_end_of_run_report_exits_130_with_the_results_saved(
    tmp_path: Path,
) -> None:
    space = Workspace.create(tmp_path)
    lines = ["tasks:"]
    for i in range(TASKS):
        lines += [f"  - name: t{i:05d}", '    prompt: "fake: say hi"', '    assert: "assert True"']
    spec = tmp_path / "demo.eval.yaml"
    spec.write_text("\n".join(lines) + "\n", encoding="utf-8")
    process = subprocess.Popen(
        [str(CALIPER), "run", str(spec), "--model", "fake", "--k", "1"],
        cwd=tmp_path,
        env=space.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not list(space.sandboxes.iterdir()) and time.monotonic() < deadline:
            time.sleep(0.05)  # the first attempts are running
        time.sleep(1.0)
        process.send_signal(signal.SIGINT)  # stop the run: it saves, then draws the report
        saved = _wait_for_results(tmp_path, deadline)
        time.sleep(0.2)
        process.send_signal(signal.SIGINT)  # and again, while the report is drawn
        stopped = time.monotonic()
        _out, err = process.communicate(timeout=60)
        took = time.monotonic() - stopped
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert took < 5, f"took {took:.1f} s to stop after the second Ctrl-C"
    assert "Traceback" not in err
    assert f"while showing the report; the results are saved in {saved}" in err
    data = json.loads(saved.read_text(encoding="utf-8"))
    assert data["meta"]["partial"] is True and len(data["tasks"]) == TASKS
