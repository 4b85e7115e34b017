"""The ledger of what a run made, through the real ``caliper`` script.

A ``caliper run`` killed with ``SIGKILL`` mid-run leaves its sandboxes, the private file with
the resolved ``${VAR}`` secret of its MCP config, and its running agent behind. ``caliper
clean``, or the next ``caliper run``, removes them, ends the agent and says what it removed;
a live run's leftovers are never touched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from caliper_fakeagent.harness import CALIPER, Workspace, pid_alive

SECRET = "s3cr3t-ledger-token-41"
SPEC = """\
    mcp:
      weather:
        command: python3
        args: [server.py]
        env:
          API_TOKEN: ${CALIPER_TEST_TOKEN}
    tasks:
      - name: slow
        prompt: "fake: sleep 60"
        assert: "assert True"
      - name: slower
        prompt: "fake: sleep 60"
        assert: "assert True"
    """
QUICK = """\
    tasks:
      - name: quick
        prompt: "fake: say hello"
        assert: "assert True"
    """


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path)


def _agents(space: Workspace) -> list[int]:
    """Live processes whose HOME is one of the workspace's sandboxes (the fake agents)."""
    marker = f"HOME={space.sandboxes}/".encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes()
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(part.startswith(marker) for part in environ.split(b"\0")):
            found.append(int(name))
    return found


def _sandboxes(space: Workspace) -> list[Path]:
    return sorted(p for p in space.sandboxes.iterdir() if p.name.startswith("caliper-attempt-"))


def _files_with_secret(space: Workspace) -> list[Path]:
    return [
        p
        for p in space.sandboxes.rglob("*")
        if p.is_file() and not p.is_symlink() and SECRET.encode() in p.read_bytes()
    ]


def _env(space: Workspace) -> dict[str, str]:
    return space.env(CALIPER_TEST_TOKEN=SECRET)


def _start(space: Workspace, spec: Path) -> subprocess.Popen[str]:
    return space.start(spec, "--k", "1", "--workers", "2", "--timeout", "90", env=_env(space))


def _wait_for_agents(space: Workspace, process: subprocess.Popen[str], count: int) -> None:
    deadline = time.monotonic() + 60
    while len(_agents(space)) < count:
        if process.poll() is not None or time.monotonic() > deadline:
            raise AssertionError(f"the agents never started: {process.communicate()[1]}")
        time.sleep(0.05)


def _kill_mid_run(space: Workspace) -> list[int]:
    """SIGKILL a run while its two agents run; the leftovers it left (checked)."""
    spec = space.spec(SPEC)
    process = _start(space, spec)
    try:
        _wait_for_agents(space, process, 2)
        deadline = time.monotonic() + 30  # the run id is claimed once the agents are out
        while not list(space.root.glob(".caliper/results/*/*.journal.jsonl")):
            assert time.monotonic() < deadline, "the run never claimed its journal"
            time.sleep(0.02)
        os.kill(process.pid, signal.SIGKILL)
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    agents = _agents(space)
    assert len(agents) >= 2, "the killed run's agents keep running"
    assert len(_sandboxes(space)) >= 2
    assert _files_with_secret(space), "the MCP config with the resolved secret is left"
    return agents


def _clean(space: Workspace) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CALIPER), "clean"],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _assert_all_gone(space: Workspace, agents: list[int]) -> None:
    assert not _sandboxes(space)
    assert not _files_with_secret(space)
    deadline = time.monotonic() + 5
    while any(pid_alive(pid) for pid in agents) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(pid_alive(pid) for pid in agents), "the orphaned agents were ended"


def test_clean_removes_a_killed_runs_sandboxes_secrets_and_agents(space: Workspace) -> None:
    agents = _kill_mid_run(space)
    sandboxes = len(_sandboxes(space))
    secrets = len(_files_with_secret(space))
    cleaned = _clean(space)
    assert cleaned.returncode == 0, cleaned.stderr
    out = cleaned.stdout
    assert f"Ended {len(agents)} agent processes" in out, out
    assert f"Removed {sandboxes} sandbox folders" in out, out
    assert f"Removed {secrets} private file" in out, out
    assert SECRET not in out + cleaned.stderr
    _assert_all_gone(space, agents)
    assert not list(space.sandboxes.glob(".caliper-ledger-*/*.ledger")), "the ledger is removed"
    again = _clean(space)
    assert again.returncode == 0 and "Nothing to clean" in again.stdout


@pytest.mark.parametrize("next_run", ["another spec", "--resume"])
def test_the_next_run_removes_a_killed_runs_leftovers_and_says_so(
    space: Workspace, next_run: str
) -> None:
    agents = _kill_mid_run(space)
    if next_run == "--resume":  # the killed run itself, its agents cut short
        spec = space.root / "demo.eval.yaml"
        done = space.run(spec, "--resume", "--timeout", "1", "--retries", "0", env=_env(space))
        assert done.returncode in (0, 1), done.stderr
    else:
        done = space.run(space.spec(QUICK, name="quick"), "--k", "1")
        assert done.returncode == 0, done.stderr
    assert "agent processes left running by a killed caliper run" in done.stderr
    assert "sandbox folders left by a killed caliper run" in done.stderr
    _assert_all_gone(space, agents)


def test_a_live_runs_leftovers_are_never_cleaned(space: Workspace) -> None:
    spec = space.spec(SPEC)
    process = _start(space, spec)
    try:
        _wait_for_agents(space, process, 2)
        agents = _agents(space)
        cleaned = _clean(space)
        assert cleaned.returncode == 0, cleaned.stderr
        assert "Nothing to clean" in cleaned.stdout, cleaned.stdout
        assert all(pid_alive(pid) for pid in agents)
        assert len(_sandboxes(space)) >= 2
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    assert not _sandboxes(space)
    assert not list(space.sandboxes.glob(".caliper-ledger-*/*.ledger")), (
        "a run that ended as usual leaves no ledger"
    )


WARM_SPEC = """\
    tasks:
      - name: quick
        prompt: "fake: say hello"
        assert: "assert True"
      - name: slow
        prompt: "fake: sleep 60"
        assert: "assert True"
    """


def _warm_servers(folder: Path) -> list[int]:
    """Live processes serving a socket inside ``folder`` (the warm assert server)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        with contextlib.suppress(OSError):
            if str(folder).encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                found.append(int(name))
    return found


def _parent(pid: int) -> int | None:
    """The parent of ``pid`` (``None`` once it is gone)."""
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[-1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def test_a_killed_runs_warm_assert_server_and_its_folder_are_cleaned(space: Workspace) -> None:
    temp = Path(tempfile.mkdtemp(prefix="cw", dir="/tmp"))  # short: the socket's path limit
    env = space.env(TMPDIR=str(temp))
    try:
        process = space.start(
            space.spec(WARM_SPEC), "--k", "1", "--workers", "2", "--timeout", "90", env=env
        )
        try:
            deadline = time.monotonic() + 60
            while not (list(temp.glob("caliper-warm-*/s")) and len(_agents(space)) >= 1):
                assert process.poll() is None, process.communicate()[1]
                assert time.monotonic() < deadline, "the quick task's assert never ran warm"
                time.sleep(0.05)
            (warm,) = temp.glob("caliper-warm-*")
            servers = [  # not the assert children it forks, which carry its command line
                pid for pid in _warm_servers(warm) if _parent(pid) == process.pid
            ]
            assert servers, "the warm assert server runs"
            # the server ends by itself once its stdin closes (the run's end or death): held
            # stopped, it stands for one that did not get to, which only the ledger can end
            for pid in servers:
                os.kill(pid, signal.SIGSTOP)
            os.kill(process.pid, signal.SIGKILL)
            process.communicate(timeout=30)
        finally:
            if process.poll() is None:
                process.kill()
        assert all(pid_alive(pid) for pid in servers), "the killed run's warm server is left"
        cleaned = subprocess.run(
            [str(CALIPER), "clean"],
            cwd=space.root,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert cleaned.returncode == 0, cleaned.stderr
        assert not warm.exists(), cleaned.stdout
        deadline = time.monotonic() + 5
        while any(pid_alive(pid) for pid in servers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(pid_alive(pid) for pid in servers), "the warm server was ended"
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def test_a_run_that_ends_leaves_no_warm_assert_folder(space: Workspace) -> None:
    temp = Path(tempfile.mkdtemp(prefix="cw", dir="/tmp"))
    try:
        done = space.run(
            space.spec(QUICK, name="quick"), "--k", "2", env=space.env(TMPDIR=str(temp))
        )
        assert done.returncode == 0, done.stderr
        assert list(temp.iterdir()) == []
    finally:
        shutil.rmtree(temp, ignore_errors=True)


LIVING_PROCESS = """\
import os, sys
from pathlib import Path
from caliper import api
from caliper.default_plugins import warm_assert
from caliper.runner import RunOptions

sandboxes = Path(os.environ["CALIPER_TMPDIR"])
for run in (1, 2):  # the process lives on between runs, like a Ray worker between jobs
    ending = api.run(sys.argv[1], RunOptions(model="fake", k=2))
    assert ending.exit_code == 0, ending.problem()
    print(f"run {run} warm:", warm_assert._server._stop_at_exit)  # set by the server's start
    print(f"run {run} left:", sorted(p.name for p in sandboxes.iterdir()))
    print(f"run {run} warm folders:", len(list(Path(os.environ["TMPDIR"]).iterdir())))
"""


def test_a_process_that_lives_on_keeps_no_ledger_in_the_sandbox_parent(space: Workspace) -> None:
    """A run in a process that goes on (a Ray worker) ends the warm assert server it started
    and leaves its sandbox parent empty, its ledger included; the next run starts the server
    again."""
    temp = Path(tempfile.mkdtemp(prefix="cw", dir="/tmp"))  # short: the socket's path limit
    try:
        script = space.root / "lives_on.py"
        script.write_text(LIVING_PROCESS, encoding="utf-8")
        done = subprocess.run(
            [str(CALIPER.parent / "python"), str(script), str(space.spec(QUICK, name="quick"))],
            cwd=space.root,
            env=space.env(TMPDIR=str(temp)),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        for run in (1, 2):
            assert f"run {run} warm: True" in done.stdout, "the assert did not run warm"
            assert f"run {run} left: []" in done.stdout, done.stdout
            assert f"run {run} warm folders: 0" in done.stdout, done.stdout
    finally:
        shutil.rmtree(temp, ignore_errors=True)
