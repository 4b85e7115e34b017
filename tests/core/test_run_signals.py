"""Stop signals through the real ``caliper run`` (fake agent): SIGTERM and SIGHUP behave like
Ctrl-C (issue 11, item 8), and a stop that has to wait for a ``cleanup:`` says so at once
(item 24)."""

from __future__ import annotations

import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from caliper_fakeagent.harness import CALIPER, CaliperRun, Workspace, pid_alive


class StderrReader:
    """Collects a running process's stderr lines as they come."""

    def __init__(self, process: subprocess.Popen[str]):
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(process,), daemon=True)
        self._thread.start()

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        for line in process.stderr:
            self.lines.append(line)

    def wait_for(self, text: str, seconds: float) -> float | None:
        """Seconds until a line containing ``text`` arrived, ``None`` if it never did."""
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            if any(text in line for line in self.lines):
                return time.monotonic() - started
            time.sleep(0.02)
        return None

    def text(self) -> str:
        self._thread.join(timeout=10)
        return "".join(self.lines)


def _wait_for_files(folder: Path, count: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        files = list(folder.iterdir())
        if len(files) >= count and all(f.read_text().strip() for f in files):
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {count} files in {folder}")


@pytest.mark.parametrize(
    ("signum", "code", "name"), [(signal.SIGTERM, 143, "SIGTERM"), (signal.SIGHUP, 129, "SIGHUP")]
)
def test_signal_saves_a_partial_run_and_leaves_nothing(tmp_path, signum, code, name):
    space = Workspace.create(tmp_path)
    pids, marks = tmp_path / "pids", tmp_path / "marks"
    pids.mkdir()
    marks.mkdir()
    spec = space.spec(f"""\
        tasks:
          - name: quick
            prompt: "fake: say quick"
            assert: "assert True"
          - name: stuck
            setup: |
              printf 'fake: grandchild %s\\nfake: sleep 60\\n' {pids}/$$ > fake-scenario.txt
            cleanup: touch {marks}/cleanup-$$
            prompt: work on it
            assert: "assert True"
        """)
    process = space.start(spec, "--k", "1", "--workers", "2", "--timeout", "90")
    try:
        _wait_for_files(pids, 1, 20)
        time.sleep(0.5)  # the quick attempt is done by now
    finally:
        sent = time.monotonic()
        process.send_signal(signum)
        run: CaliperRun = space.finish(process, timeout=30)
    assert time.monotonic() - sent < 15
    assert run.returncode == code, run.stderr
    assert f"Stopped by {name}" in run.stderr and "Traceback" not in run.stderr
    meta = run.results["meta"]
    assert meta["partial"] is True and name in meta["stop_reason"]
    assert [a["outcome"] for a in run.attempts("quick")] == ["pass"]
    assert run.attempts("stuck") == []
    (pidfile,) = pids.iterdir()
    assert not pid_alive(int(pidfile.read_text())), "the agent's grandchild survived"
    assert len(list(marks.iterdir())) == 1, "cleanup did not run"
    assert list(space.sandboxes.iterdir()) == []


def test_ignored_sighup_stays_ignored(tmp_path):
    """Under ``nohup`` (SIGHUP ignored) a hang-up does not stop the run."""
    space = Workspace.create(tmp_path)
    spec = space.spec("""\
        tasks:
          - name: steady
            prompt: |
              fake: sleep 1.5
              fake: say done
            assert: "assert True"
        """)
    process = subprocess.Popen(
        ["nohup", str(CALIPER), "run", str(spec), "--model", "fake"],
        cwd=space.root,
        env=space.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.7)
    process.send_signal(signal.SIGHUP)
    run = space.finish(process, timeout=60)
    assert run.returncode == 0, run.stderr
    assert [a["outcome"] for a in run.attempts("steady")] == ["pass"] * 3


def test_ctrl_c_while_cleanup_hangs_says_what_it_waits_for(tmp_path):
    space = Workspace.create(tmp_path)
    started = tmp_path / "cleanup-started"
    spec = space.spec(f"""\
        tasks:
          - name: tidy up
            prompt: "fake: say hi"
            assert: "assert True"
            cleanup: touch {started}; sleep 30
        """)
    process = space.start(spec, "--k", "1", "--setup-timeout", "40")
    reader = StderrReader(process)
    deadline = time.monotonic() + 20
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), "the cleanup never started"
    process.send_signal(signal.SIGINT)
    waited = reader.wait_for("Stopping: waiting for cleanup of task 'tidy up' (up to ", 5)
    assert waited is not None, reader.text()
    assert waited < 2, f"the stop was acknowledged only after {waited:.1f}s"
    # the time left of its 40 s budget, and how to cut it short
    assert re.search(
        r"\(up to (3[5-9]|40) s\); press Ctrl-C again to cut it short\.", "".join(reader.lines)
    ), reader.lines
    time.sleep(0.5)
    assert process.poll() is None, "the first Ctrl-C must let the cleanup finish"
    process.send_signal(signal.SIGINT)
    cut = time.monotonic()
    process.wait(timeout=15)
    assert time.monotonic() - cut < 10
    assert process.returncode == 130
    assert "Traceback" not in reader.text()


def test_cleanup_of_an_attempt_stopped_mid_agent_is_announced(tmp_path):
    """Ctrl-C while the agent runs: the agent is killed, the cleanup that starts afterwards is
    announced, and it runs to completion."""
    space = Workspace.create(tmp_path)
    running, done = tmp_path / "agent-running", tmp_path / "cleanup-done"
    spec = space.spec(f"""\
        tasks:
          - name: long job
            prompt: |
              fake: bash touch {running}
              fake: sleep 60
            assert: "assert True"
            cleanup: sleep 1; touch {done}
        """)
    process = space.start(spec, "--k", "1", "--setup-timeout", "40")
    reader = StderrReader(process)
    deadline = time.monotonic() + 20
    while not running.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    assert reader.wait_for("Stopping (Ctrl-C)", 2) is not None, reader.lines
    assert reader.wait_for("waiting for cleanup of task 'long job' (up to 40 s)", 5) is not None
    process.wait(timeout=20)
    assert process.returncode == 130, reader.text()
    assert done.exists(), "the cleanup was cut short by a single Ctrl-C"
