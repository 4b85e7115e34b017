"""A run's per-attempt cost stays flat as the run grows (issue 20), checked by counting, never
by timing: the Python calls of caliper's own code per finished attempt. (What an attempt
creates on disk is guarded where it is made: ``test_process_wait.py``, ``test_run_sandbox.py``
and ``test_skill_tree.py``.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from caliper_fakeagent.harness import Workspace

# Runs ``caliper`` (its console entry point, ``caliper.cli:main``) with every Python call in
# caliper's own packages counted, in every thread; writes the count to the file in argv[1].
COUNTING_CALIPER = """
import os, sys, threading
counts = [0]
# loops that wake on a clock (waiting for an exit, for a finished attempt, for the next
# fsync) and scans whose size is the number of threads alive at that moment: their counts
# follow the machine's speed, not the run's size
TIMED = {"wait", "_should_stop", "_trim", "next_finished", "_flush_loop", "_children",
         "_read", "_read_proc", "_own_subtree", "_process_table"}
def count(frame, event, arg):
    code = frame.f_code
    if event == "call" and ("/caliper/" in code.co_filename
                            or "/caliper_" in code.co_filename) and code.co_name not in TIMED:
        counts[0] += 1
out = sys.argv.pop(1)
threading.setprofile(count)
sys.setprofile(count)
import atexit
atexit.register(lambda: open(out, "w").write(str(counts[0])))
from caliper.cli import main
sys.argv[0] = "caliper"
main()
"""


def _calls(space: Workspace, tasks: int, tmp_path: Path) -> int:
    """Calls in caliper's code for a run of ``tasks`` tasks of 2 attempts each."""
    spec = space.spec(
        "skills:\n  - ./skills/shout\ntasks:\n"
        + "".join(
            f"  - name: greet {n}\n    prompt: |\n      Greet the team.\n      fake: load shout\n"
            "    activates: [shout]\n"
            for n in range(tasks)
        ),
        name=f"greet-{tasks}",
    )
    out, results = tmp_path / f"calls-{tasks}.txt", tmp_path / f"run-{tasks}.json"
    argv = [sys.executable, "-c", COUNTING_CALIPER, str(out), "run", str(spec)]
    done = subprocess.run(
        [*argv, "--model", "fake", "--k", "2", "--workers", "2", "--output", str(results)],
        cwd=space.root,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    saved = json.loads(results.read_text())["tasks"]
    assert sum(len(t["attempts"]) for t in saved) == 2 * tasks
    assert {a["outcome"] for t in saved for a in t["attempts"]} == {"not_checked"}
    return int(out.read_text())


def test_calls_per_finished_attempt_do_not_grow_with_the_run(tmp_path: Path):
    # Work that walks what earlier attempts left (a list of every record, every pending
    # future, the journal so far) makes the marginal cost of an attempt grow with the run:
    # one call per earlier attempt makes the second marginal below ~1.1x the first.
    # (k stays 2 and the tasks grow, so the final report's layout does not change with k)
    space = Workspace.create(tmp_path)
    space.skill("shout", "Greets loudly")
    small, middle, large = (_calls(space, tasks, tmp_path) for tasks in (5, 20, 35))
    first = (middle - small) / 30
    second = (large - middle) / 30
    assert first > 100, (small, middle, large)  # an attempt is real work, counted
    assert second < first * 1.05, (
        f"calls per attempt grew from {first:.0f} (attempts 10-40) to {second:.0f} (40-70)"
    )
