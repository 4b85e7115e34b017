"""The one stop policy, through the real ``caliper`` script: a stop signal at start-up is a
clean 128 + N with no traceback, whatever the command; a stop that lands while a run saves
its results still ends the command (``tune`` writes nothing after it); the policy's own state
machine, in-process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from caliper_fakeagent.harness import CALIPER, FAKE_AGENT, Workspace

STORED_RUN = Path(__file__).parent / "stored" / "judged-run-before-typed-judge-fields.json"


def _caught(pid: int) -> int:
    """The mask of signals process ``pid`` has a handler for (``SigCgt``), 0 once gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith("SigCgt:"):
            return int(line.split()[1], 16)
    return 0


def _handles(pid: int, signum: int) -> bool:
    return bool(_caught(pid) & (1 << (signum - 1)))


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize(
    "args",
    [["report", str(STORED_RUN)], ["validate", "{spec}"], ["plugins"], ["list"]],
    ids=["report", "validate", "plugins", "list"],
)
def test_a_stop_signal_at_start_up_is_a_clean_exit(tmp_path, args, signum):
    """The signal is sent as soon as the process handles SIGTERM (Python alone never does:
    that is the policy, installed before click and the command are imported): the command
    must end with 128 + N and one line, no traceback."""
    spec = tmp_path / "s.eval.yaml"
    spec.write_text("tasks:\n  - name: t\n    prompt: hi\n    assert: assert True\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    process = subprocess.Popen(
        [str(CALIPER), *(a.format(spec=spec) for a in args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
        text=True,
    )
    deadline = time.monotonic() + 20
    while not _handles(process.pid, signal.SIGTERM) and process.poll() is None:
        assert time.monotonic() < deadline, "the policy was never installed"
        time.sleep(0.0005)
    assert process.poll() is None, "caliper ended without ever handling SIGTERM"
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert len(stderr.strip().splitlines()) <= 1, stderr


SAVE_HOOK = """\
import os, signal
from caliper.runner.run import journaling

_finish = journaling.RunJournal.finish


def finish(self, **kwargs):
    os.kill(os.getpid(), signal.SIGINT)  # a Ctrl-C while the run's results are being saved
    return _finish(self, **kwargs)


journaling.RunJournal.finish = finish
"""


def _save_hook(folder: Path) -> Path:
    """A ``sitecustomize`` that sends the process SIGINT as each run starts saving."""
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(SAVE_HOOK, encoding="utf-8")
    return folder


def test_ctrl_c_while_the_first_measurement_saves_stops_tune(tmp_path):
    """The Ctrl-C lands after the first measurement's last attempt, while its run is saved:
    the run's own handler takes it ("Stopping…"); tune must stop there (exit 130) and never
    measure, propose or write SKILL.md after it."""
    if not FAKE_AGENT.exists():
        pytest.skip(f"the fake agent is not installed at {FAKE_AGENT}")
    space = Workspace.create(tmp_path / "w")
    (space.root / ".caliper").mkdir()
    skill = space.skill("invoice-totals", "Totals invoices")
    before = (skill / "SKILL.md").read_bytes()
    load = "fake: load invoice-totals"
    items = [{"query": f"{load}\nfake: say {i}", "should_trigger": True} for i in range(3)]
    items += [{"query": f"fake: say no {i}", "should_trigger": False} for i in range(3)]
    probes = space.root / "probes.json"
    probes.write_text(json.dumps(items), encoding="utf-8")
    hook = _save_hook(tmp_path / "hook")
    args = ["tune", str(skill), "--model", "fake", "--probes", str(probes), "--k", "2", "--write"]
    done = subprocess.run(
        [str(CALIPER), *args],
        cwd=space.root,
        env=space.env(PYTHONPATH=str(hook)),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 130, done.stdout + done.stderr
    assert "c0 (current)" not in done.stdout  # nothing after the first measurement
    assert "Measuring on the test probes" not in done.stdout
    assert (skill / "SKILL.md").read_bytes() == before
    assert "Traceback" not in done.stderr


def test_the_policy_records_before_the_command_and_raises_during_it(monkeypatch):
    from caliper.system import stop_policy

    monkeypatch.setattr(stop_policy._State, "phase", "starting")
    monkeypatch.setattr(stop_policy._State, "installed", True)
    monkeypatch.setattr(stop_policy._State, "received", None)
    stop_policy._handler(signal.SIGTERM, None)  # during start-up: only recorded
    assert stop_policy.received() == signal.SIGTERM
    with pytest.raises(stop_policy.StopSignal) as raised:
        stop_policy.begin()
    assert raised.value.exit_code == 143
    with pytest.raises(stop_policy.StopSignal):
        stop_policy._handler(signal.SIGINT, None)  # while running: raised where it lands
    stop_policy.end()
    stop_policy._handler(signal.SIGHUP, None)  # after the end: nothing raised
    assert stop_policy.received() == signal.SIGTERM  # the first one counts


def test_a_program_calling_caliper_in_process_keeps_its_own_handlers():
    """Importing ``caliper.cli`` from a program (not the console script) installs nothing."""
    code = (
        "import signal\nbefore = signal.getsignal(signal.SIGTERM)\n"
        "import caliper.cli\nassert signal.getsignal(signal.SIGTERM) is before\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
