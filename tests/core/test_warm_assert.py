"""``assert:`` runs in a child forked from a warm server (issue 20), isolated like a fresh
interpreter: its own working directory, environment and module state, the same timeout and
kill rules, descendants ended; a fresh interpreter where the server is off or has died.
Real ``caliper run`` with the fake agent as a subprocess."""

from __future__ import annotations

import json
import os
import signal
import textwrap
import time
from pathlib import Path

import pytest
from test_run_descendants import sleepers

from caliper_fakeagent.harness import Workspace

# each assert records how it was started: "_warm_server.py" (forked) or "_assert_runner.py"
RECORD_MODE = """\
import os, sys
from pathlib import Path
with open(os.environ["MODES"], "a") as log:
    log.write(Path(sys.modules["__main__"].__file__).name + "\\n")
"""


def assert_spec(space: Workspace, name: str, prompt: str, body: str) -> Path:
    """A spec of one task whose ``assert:`` first records its mode, then runs ``body``."""
    code = textwrap.indent(RECORD_MODE + textwrap.dedent(body), "      ")
    text = f"tasks:\n  - name: {name}\n" + textwrap.indent(textwrap.dedent(prompt), "    ")
    return space.spec(text + "    assert: |\n" + code)


def modes(path) -> list[str]:
    return path.read_text().split() if path.exists() else []


@pytest.mark.parametrize("warm", ["1", "0"])
def test_each_assert_is_isolated_from_the_one_before(tmp_path, warm):
    space = Workspace.create(tmp_path)
    log = tmp_path / "modes"
    spec = assert_spec(
        space,
        "isolated",
        """\
        prompt: |
          fake: bash echo made > here.txt
          fake: say done
        """,
        """\
        import builtins
        assert os.getcwd() == os.environ["CALIPER_WORKDIR"], os.getcwd()
        assert Path("here.txt").read_text() == "made\\n"
        assert not hasattr(builtins, "leaked_by_an_earlier_assert"), "module state leaked"
        builtins.leaked_by_an_earlier_assert = True
        assert "LEAKED_VARIABLE" not in os.environ, "environment leaked"
        os.environ["LEAKED_VARIABLE"] = "1"
        assert "json_leak_probe" not in sys.modules, "imports leaked"
        sys.modules["json_leak_probe"] = sys
        assert os.getpgid(0) == os.getpid(), "not in a session of its own"
        """,
    )
    run = space.run(
        spec, "--k", "4", "--workers", "2", env=space.env(MODES=str(log), CALIPER_WARM_ASSERT=warm)
    )
    assert run.returncode == 0, run.stderr
    outcomes = [a["outcome"] for a in run.attempts("isolated")]
    assert outcomes == ["pass"] * 4, run.attempts("isolated")
    expected = "_warm_server.py" if warm == "1" else "_assert_runner.py"
    assert modes(log) == [expected] * 4


def test_a_slow_assert_is_killed_at_its_timeout_with_its_daemon(tmp_path):
    space = Workspace.create(tmp_path)
    log = tmp_path / "modes"
    spec = assert_spec(
        space,
        "slow",
        """\
        prompt: "fake: say done"
        """,
        """\
        import subprocess, time
        subprocess.Popen(["setsid", "sleep", "3121"], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(60)
        """,
    )
    try:
        started = time.monotonic()
        run = space.run(spec, "--k", "1", "--judge-timeout", "1", env=space.env(MODES=str(log)))
        took = time.monotonic() - started
        (attempt,) = run.attempts("slow")
        assert attempt["outcome"] == "judge_error", attempt
        assert "assert timed out after 1s" in str(attempt), attempt
        assert took < 30
        assert modes(log) == ["_warm_server.py"]
        time.sleep(0.3)
        assert sleepers("3121") == [], "the assert's daemon outlived it"
    finally:
        for pid in sleepers("3121"):
            os.kill(pid, signal.SIGKILL)


def test_a_crashing_assert_fails_with_its_exit_and_the_next_still_runs_warm(tmp_path):
    space = Workspace.create(tmp_path)
    log = tmp_path / "modes"
    spec = assert_spec(
        space,
        "crashes",
        """\
        prompt: "fake: say done"
        """,
        """\
        if len(Path(os.environ["MODES"]).read_text().split()) == 1:
            os.kill(os.getpid(), 9)
        raise ValueError("boom")
        """,
    )
    run = space.run(spec, "--k", "2", "--workers", "1", env=space.env(MODES=str(log)))
    first, second = run.attempts("crashes")
    assert first["outcome"] == "task_fail", first
    assert "exit code -9" in str(first), first
    assert second["outcome"] == "task_fail", second
    assert "ValueError: boom" in str(second), second
    assert modes(log) == ["_warm_server.py"] * 2


def test_when_the_warm_server_dies_the_next_asserts_run_in_a_fresh_interpreter(tmp_path):
    space = Workspace.create(tmp_path)
    log = tmp_path / "modes"
    spec = assert_spec(
        space,
        "kills-its-server",
        """\
        prompt: "fake: say done"
        """,
        """\
        import signal
        if Path(sys.modules["__main__"].__file__).name == "_warm_server.py":
            os.kill(os.getppid(), signal.SIGKILL)
        assert Path(os.environ["CALIPER_WORKDIR"]).is_dir()
        """,
    )
    run = space.run(spec, "--k", "3", "--workers", "1", env=space.env(MODES=str(log)))
    assert run.returncode == 0, run.stderr
    outcomes = [a["outcome"] for a in run.attempts("kills-its-server")]
    assert outcomes == ["pass"] * 3, run.attempts("kills-its-server")
    assert modes(log) == ["_warm_server.py", "_assert_runner.py", "_assert_runner.py"]


def test_an_exit_status_read_with_the_pid_is_not_taken_for_a_dead_server():
    # a fast assert's status can arrive in the same read as its pid, and then the server
    # closes the connection: that read must count, not the EOF after it (it used to make
    # caliper think the server had died, and every later assert ran in a fresh interpreter)
    import socket

    from caliper.default_plugins import warm_assert

    ours, theirs = socket.socketpair()
    theirs.close()  # the server has answered and closed the connection
    server = warm_assert._Server()
    child = warm_assert._RemoteChild(ours, pid=2**22 + 12345, server=server)
    child._buffer = b'{"status": 3}\n'  # read together with {"pid": …} by _Server.start
    assert child.poll() == 3
    assert child.wait(timeout=1) == 3
    assert not server._dead


SLOW_FORK_SERVER = """\
import os, sys, time
sys.path.insert(0, {folder!r})
import _warm_server

fork = os.fork


def fork_then_stall():
    pid = fork()
    if pid:
        time.sleep(1.0)  # the server is descheduled right after the fork
    return pid


os.fork = fork_then_stall
_warm_server.serve(sys.argv[1])
"""


def test_a_server_killed_right_after_its_fork_runs_the_assert_once(tmp_path, monkeypatch):
    # the forked child killed the server before the server had sent the child's pid: caliper
    # saw the connection close without a pid and ran the assert again in a fresh interpreter,
    # while the forked child went on running it too (twice, at once, in the same folder)
    import subprocess
    import sys

    from caliper.default_plugins import assert_judge, warm_assert
    from caliper.system import ledger

    server_script = tmp_path / "slow_fork_server.py"
    server_script.write_text(SLOW_FORK_SERVER.format(folder=str(warm_assert.SERVER.parent)))
    monkeypatch.setattr(warm_assert, "SERVER", server_script)
    monkeypatch.setenv("CALIPER_TMPDIR", str(tmp_path / "sandboxes"))
    runs, result = tmp_path / "runs", tmp_path / "result.json"
    code = tmp_path / "assertion.py"
    code.write_text(
        "import os, signal, sys\n"
        f"with open({str(runs)!r}, 'a') as log:\n"
        "    log.write(os.path.basename(sys.modules['__main__'].__file__) + '\\n')\n"
        "if not sys.modules['__main__'].__file__.endswith('_assert_runner.py'):\n"
        "    os.kill(os.getppid(), signal.SIGKILL)\n"
    )
    argv = [sys.executable, str(assert_judge.RUNNER), str(code), str(result), "<assert>", "."]
    server = warm_assert._Server()
    try:
        assert server.available()
        with open(os.devnull, "rb") as stdin, (tmp_path / "out").open("wb") as out:
            child = server.start(argv, stdin, out, out, tmp_path, dict(os.environ))
            assert isinstance(child, warm_assert._RemoteChild)
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pytest.fail("the forked assert was not seen to end")
        assert runs.read_text().split() == ["slow_fork_server.py"]  # forked, and only there
        assert server._dead  # and the next assert runs in a fresh interpreter
        assert json.loads(result.read_text()) == {"status": "pass"}
    finally:
        server.stop()
        ledger.release_idle()
