"""While caliper is a child subreaper, its process scan walks only the processes below it
(``/proc/PID/task/*/children``) instead of every process on the machine (issue 20): it must
find exactly what the full scan finds, daemonised orphans included.

Run in a child Python, so that making it a subreaper does not change the test process.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHECK = textwrap.dedent(
    """\
    import os, subprocess, sys, time
    from caliper.system import process

    assert process.adopt_orphans()
    # a child with a grandchild, and a double-forked setsid daemon whose parent has exited
    # (so it is re-parented to this process, the subreaper)
    tree = subprocess.Popen(["sh", "-c", "sleep 30 & wait"])
    subprocess.run(["sh", "-c", "setsid sh -c 'sleep 30' > /dev/null 2>&1 &"], check=True)
    time.sleep(0.5)
    mine = os.getpid()
    full = process._full_table(0)
    below = process._with_descendants([p.pid for p in full.values() if p.ppid == mine], full)
    walked = process._process_table(0)
    assert set(walked) == below, (sorted(walked), sorted(below))
    orphans = [p for p in walked.values() if p.ppid == mine and p.pid != tree.pid]
    assert orphans, "the daemon was not re-parented here"
    assert len(walked) >= 3, sorted(walked)  # sh and its sleep, the daemon (and its sleep)
    for pid in walked:
        os.kill(pid, 9)
    print("OK")
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="subreapers are Linux only")
def test_the_subtree_walk_finds_what_the_full_scan_finds():
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "OK" in done.stdout, done.stderr
