"""What ``caliper.system.ledger.clean_dead`` may touch: only what a dead process provably made.

A recycled pid (same pid, another start time) is never killed; a folder without the ledger's
token, or a link, is never removed; a ledger its live process holds is left alone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from caliper.system import ledger
from caliper.system.process import _start_time

TOKEN = "a1b2c3d4"


def _dead_ledger(base: Path, entries: list[dict], pid: int = 999_999) -> Path:
    folder = ledger.ledger_folder(base)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / f"{pid}-{TOKEN}{ledger.SUFFIX}"
    head = {ledger.FORMAT_KEY: 1, "pid": pid, "start": 0, "token": TOKEN}
    path.write_text("".join(json.dumps(e) + "\n" for e in [head, *entries]))
    return path


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_a_recycled_pid_is_never_killed_and_the_same_process_is(tmp_path: Path) -> None:
    other = _sleeper()
    try:
        started = _start_time(other.pid)
        assert started > 0
        path = _dead_ledger(tmp_path, [{"pid": other.pid, "start": started + 1, "tag": None}])
        cleaned = ledger.clean_dead(tmp_path)
        assert cleaned.runs == 1 and cleaned.processes == 0
        assert other.poll() is None, "a process whose start time differs is not the run's"
        assert not path.exists()
        _dead_ledger(tmp_path, [{"pid": other.pid, "start": started, "tag": None}])
        cleaned = ledger.clean_dead(tmp_path)
        assert cleaned.processes == 1
        assert other.wait(timeout=10) == -9
    finally:
        if other.poll() is None:
            other.kill()
            other.wait()


def test_only_real_folders_carrying_the_token_are_removed(tmp_path: Path) -> None:
    mine = tmp_path / f"caliper-attempt-{TOKEN}-0001"
    (mine / "private").mkdir(parents=True)
    secret = mine / "private" / "mcp.json"
    secret.write_text("{}")
    foreign = tmp_path / "caliper-attempt-someoneelse"
    foreign.mkdir()
    target = tmp_path / "precious"
    target.mkdir()
    (target / "keep.txt").write_text("keep")
    link = tmp_path / f"caliper-attempt-{TOKEN}-0002"
    link.symlink_to(target)
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    _dead_ledger(
        tmp_path,
        [
            {"sandbox": str(mine)},
            {"sandbox": str(foreign)},
            {"sandbox": str(link)},
            {"private": str(secret)},
            {"private": str(outside)},
        ],
    )
    cleaned = ledger.clean_dead(tmp_path)
    assert (cleaned.sandboxes, cleaned.private_files) == (1, 1)
    assert not mine.exists()
    assert foreign.is_dir() and (target / "keep.txt").is_file() and link.is_symlink()
    assert outside.is_file(), "a private file outside the run's sandboxes is not touched"


def test_a_live_processs_ledger_is_left_alone(tmp_path: Path) -> None:
    sandbox = tmp_path / f"caliper-attempt-{TOKEN}-0003"
    sandbox.mkdir()
    path = _dead_ledger(tmp_path, [{"sandbox": str(sandbox)}])
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,os,sys,time;fd=os.open(sys.argv[1],os.O_RDONLY);"
            "fcntl.flock(fd,fcntl.LOCK_EX);print('held',flush=True);time.sleep(60)",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        cleaned = ledger.clean_dead(tmp_path)
        assert cleaned.runs == 0 and sandbox.is_dir() and path.exists()
    finally:
        holder.kill()
        holder.wait()
    assert ledger.clean_dead(tmp_path).sandboxes == 1
    assert not sandbox.exists()


def test_a_ledger_folder_of_another_owner_or_a_link_is_not_used(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    ledger.ledger_folder(tmp_path).symlink_to(elsewhere)
    assert ledger.clean_dead(tmp_path).runs == 0
    assert ledger.current(tmp_path) is None, "no ledger is written through a link"
    assert list(elsewhere.iterdir()) == []
    assert os.path.islink(ledger.ledger_folder(tmp_path))
