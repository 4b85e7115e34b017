"""``caliper run --output`` onto things that are not regular files (issue 11 item 10), through
the real ``caliper`` script with the fake agent."""

from __future__ import annotations

import json
import os
import stat
import threading
from pathlib import Path

import pytest

from caliper_fakeagent.harness import Workspace

SPEC = """\
tasks:
  - name: t
    prompt: "fake: say done"
    assert: "assert True"
"""


@pytest.fixture
def space(tmp_path: Path) -> Workspace:
    return Workspace.create(tmp_path)


def _is_char_device(path: Path) -> bool:
    return stat.S_ISCHR(os.lstat(path).st_mode)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can make a device node")
def test_a_device_node_stays_a_device(space, tmp_path):
    # First a private node of the null device (1, 3): if caliper renamed over it, only this
    # copy is lost. Only once that held is the real /dev/null used.
    private_null = tmp_path / "null"
    os.mknod(private_null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    spec = space.spec(SPEC)
    done = space.run(spec, "--k", "1", "--output", str(private_null))
    assert done.returncode == 0, done.stderr
    assert _is_char_device(private_null), "the device node was replaced by a regular file"
    assert [p.name for p in tmp_path.glob(".null*")] == []
    done = space.run(spec, "--k", "1", "--output", "/dev/null")
    assert done.returncode == 0, done.stderr
    assert _is_char_device(Path("/dev/null"))
    assert done.results_path is not None  # the store copy is still written


def test_a_fifo_gets_the_results_through_the_pipe(space, tmp_path):
    fifo = tmp_path / "results.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as pipe:  # blocks until caliper opens the other end
            received.append(pipe.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    done = space.run(space.spec(SPEC), "--k", "1", "--output", str(fifo))
    reader.join(timeout=30)
    assert done.returncode == 0, done.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert json.loads(received[0])["meta"]["run_id"] == done.results["meta"]["run_id"]


def test_a_fifo_nobody_reads_is_one_message_not_a_hang(space, tmp_path):
    fifo = tmp_path / "nobody.fifo"
    os.mkfifo(fifo)
    done = space.run(space.spec(SPEC), "--k", "1", "--output", str(fifo), timeout=60)
    assert done.returncode == 1, done.stderr
    assert "no program is reading" in done.stderr
    assert "Traceback" not in done.stderr
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert done.results_path is not None  # the store copy was saved


def test_a_symlink_is_kept_and_its_target_written(space, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "run.json"
    target.write_text("old\n")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    done = space.run(space.spec(SPEC), "--k", "1", "--output", str(link))
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["meta"]["run_id"] == done.results["meta"]["run_id"]
    assert [p.name for p in elsewhere.iterdir()] == ["run.json"]  # no temp file left


def test_a_socket_is_refused(space, tmp_path):
    import socket

    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    try:
        done = space.run(space.spec(SPEC), "--k", "1", "--output", str(path))
    finally:
        server.close()
    assert done.returncode == 2, done.stderr  # refused before any attempt ran
    assert "is a socket, not a file" in done.stderr
    assert done.results_path is None
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_dev_stdout_when_it_is_a_pipe(space):
    """``/dev/stdout`` is a link to ``/proc/self/fd/1``, here a pipe: the JSON goes into it."""
    done = space.run(space.spec(SPEC), "--k", "1", "--output", "/dev/stdout")
    assert done.returncode == 0, done.stderr
    start = done.stdout.index("{\n")
    data, _ = json.JSONDecoder().raw_decode(done.stdout[start:])
    assert data["meta"]["run_id"] == done.results["meta"]["run_id"]


def test_dev_null_passes_the_preflight_when_dev_is_not_writable(space, monkeypatch):
    """Ordinary users cannot write to ``/dev``; ``--output /dev/null`` is written in place, so
    the pre-flight must not ask for a writable folder there (simulated: ``os.access`` says no
    for ``/dev``, as it does for a user who is not root)."""
    from caliper.commands.run_setup import check_save_targets
    from caliper.errors import UsageError

    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m: Path(p) != Path("/dev") and real_access(p, m))
    spec = space.spec(SPEC)
    monkeypatch.chdir(space.root)
    check_save_targets(spec, Path("/dev/null"))  # before: "the folder /dev is not writable"
    with pytest.raises(UsageError, match="/dev is not writable"):
        check_save_targets(spec, Path("/dev/caliper-results.json"))
