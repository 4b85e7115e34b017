"""``caliper validate`` from the console script runs without the cycle collector and ends
without tearing the interpreter down (``caliper.system.quick_exit``, issue 20), and still exits as a
normal exit would: the same status, all its output, the ``atexit`` handlers run, live threads
waited for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from caliper_fakeagent.harness import CALIPER

RUN_SCRIPT = (
    "import atexit, runpy, sys, types\n"
    "class Probe:\n"
    "    def __del__(self):\n"
    "        sys.__stderr__.write('TORN DOWN\\n')\n"
    "holder = types.ModuleType('teardown_probe')\n"
    "holder.probe = Probe()\n"
    "sys.modules['teardown_probe'] = holder\n"
    "import gc\n"
    "atexit.register(lambda: print('ATEXIT RAN, GC', gc.isenabled(), file=sys.stderr))\n"
    "{extra}"
    "sys.argv = [sys.argv[1], *sys.argv[2:]]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)
"""The real console script run as ``__main__``, with an object whose finalizer reports the
interpreter's teardown and an ``atexit`` handler that reports it ran."""


def _script(tmp_path: Path, *args: str, extra: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUN_SCRIPT.format(extra=extra), str(CALIPER), *args],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _good_spec(tmp_path: Path) -> None:
    (tmp_path / "v.eval.yaml").write_text("tasks:\n  - name: a\n    prompt: hi\n    assert: x\n")


def test_validate_skips_the_teardown_but_runs_the_atexit_handlers(tmp_path: Path) -> None:
    _good_spec(tmp_path)
    done = _script(tmp_path, "validate", "v.eval.yaml")
    assert done.returncode == 0, done.stderr
    assert "v.eval.yaml: valid: 1 task" in done.stdout
    assert "ATEXIT RAN, GC False" in done.stderr  # the collector was paused throughout
    assert "TORN DOWN" not in done.stderr


def test_an_invalid_spec_exits_2_with_every_line_of_its_output(tmp_path: Path) -> None:
    """Many problems as JSON on a pipe: the buffered output is all flushed before the end."""
    tasks = "".join(f"  - name: t{i}\n    prompt: hi\n    nope{i}: 1\n" for i in range(300))
    (tmp_path / "bad.eval.yaml").write_text("tasks:\n" + tasks)
    done = _script(tmp_path, "validate", "bad.eval.yaml", "--format", "json")
    assert done.returncode == 2
    data = json.loads(done.stdout)
    assert data["valid"] is False
    assert len(data["specs"][0]["problems"]) >= 300
    assert "Error: 1 of 1 spec invalid" in done.stderr
    assert "ATEXIT RAN" in done.stderr and "TORN DOWN" not in done.stderr


def test_a_live_thread_makes_it_a_normal_exit(tmp_path: Path) -> None:
    """A thread still running is waited for, as at any exit (here one a plugin might start).

    The thread lives until the command is over (the quick exit's module is imported right
    before it is tried) and a little longer, however slow the machine is."""
    _good_spec(tmp_path)
    thread = (
        "import threading, time\n"
        "def outlive():\n"
        "    deadline = time.monotonic() + 50\n"
        "    while 'caliper.system.quick_exit' not in sys.modules:\n"
        "        if time.monotonic() > deadline: break\n"
        "        time.sleep(0.01)\n"
        "    time.sleep(0.3)\n"
        "    print('THREAD DONE')\n"
        "threading.Thread(target=outlive).start()\n"
    )
    done = _script(tmp_path, "validate", "v.eval.yaml", extra=thread)
    assert done.returncode == 0, done.stderr
    assert "THREAD DONE" in done.stdout
    assert "ATEXIT RAN, GC True" in done.stderr and "TORN DOWN" in done.stderr


def test_other_commands_and_calls_with_arguments_exit_as_usual(tmp_path: Path) -> None:
    _good_spec(tmp_path)
    done = _script(tmp_path, "list", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert "ATEXIT RAN, GC True" in done.stderr and "TORN DOWN" in done.stderr
    code = (
        "import gc, sys\nfrom caliper.cli import main\n"
        "print('RETURNED', main(['validate', 'v.eval.yaml']), 'GC', gc.isenabled())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert "RETURNED 0 GC True" in done.stdout, done.stderr


def test_a_run_skips_the_teardown_once_its_results_are_saved(tmp_path: Path) -> None:
    """``caliper run`` (fake agent) ends without the teardown, with the collector on, and
    only after everything is written: the results file complete, the journal gone, the
    ``--output`` copy and the JUnit report there, the report printed."""
    from caliper_fakeagent.harness import Workspace

    space = Workspace.create(tmp_path)
    space.skill("shout")
    spec = space.spec(
        "skills: [./skills/shout]\n"
        "tasks:\n  - name: a\n    prompt: hi\n    activates: [shout]\n"
        "  - name: b\n    prompt: hi\n    assert: assert True\n"
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            RUN_SCRIPT.format(extra=""),
            str(CALIPER),
            "run",
            str(spec),
            "--model",
            "fake",
            "--k",
            "3",
            "--output",
            "copy.json",
            "--junit",
            "junit.xml",
        ],
        cwd=tmp_path,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    assert "ATEXIT RAN, GC True" in done.stderr
    assert "TORN DOWN" not in done.stderr
    saved = space.latest_results()
    assert saved is not None
    data = json.loads(saved.read_text())
    assert sorted(len(t["attempts"]) for t in data["tasks"]) == [3, 3]
    assert json.loads((tmp_path / "copy.json").read_text()) == data
    assert "</testsuites>" in (tmp_path / "junit.xml").read_text()
    assert not list(saved.parent.glob("*.journal.jsonl"))
    assert "A copy was saved to copy.json" in done.stdout
