"""What ``caliper run`` does before its first agent starts (issue 20): only what that start
needs. The journal (and the results codec, cattrs), the live display (rich) and the
end-of-run modules are set up while the first agents run, not before. Counted through the
real console script with the fake agent: the modules loaded when the first process starts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from caliper_fakeagent.harness import CALIPER, Workspace

SPAWN_PROBE = (
    "import atexit, gc, os, runpy, sys, threading\n"
    "import caliper.system.process as process\n"
    "real_popen = process._popen\n"
    "seen = []\n"
    "def popen(*args, **kwargs):\n"
    "    if not seen:\n"
    "        seen.append(1)\n"
    "        journals = [str(p) for p in "
    "__import__('pathlib').Path('.caliper').rglob('*.journal.jsonl')]\n"
    "        with open('at-first-spawn.json', 'w') as out:\n"
    "            __import__('json').dump({'modules': sorted(sys.modules), "
    "'journals': journals, 'collector': gc.isenabled()}, out)\n"
    "    return real_popen(*args, **kwargs)\n"
    "process._popen = popen\n"
    "import caliper.runner.run.startup as startup\n"
    "startup.FirstStarts.LONGEST = 60.0  # a loaded machine must not make the wait give up\n"
    "def at_exit():\n"
    "    print('AT EXIT', gc.isenabled(), gc.get_freeze_count() > 0)\n"
    "    with open('at-exit.json', 'w') as out:\n"
    "        __import__('json').dump(sorted(sys.modules), out)\n"
    "atexit.register(at_exit)\n"
    "sys.argv = [sys.argv[1], *sys.argv[2:]]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)
"""The real console script as ``__main__``, noting the loaded modules and the journals on
disk when ``run_process`` starts its first process, and the loaded modules at its exit."""

NOT_BEFORE_THE_FIRST_AGENT = (
    "cattrs",  # the journal's header is unstructured with it
    "caliper.results.codec",
    "caliper.results.models",  # the record classes: made once an attempt ends
    "caliper.plugin.verdict",  # the check-time types: made once an attempt is judged
    "caliper.results.journal",
    "caliper.runner.run.journaling",
    "caliper.runner.progress",  # the live display
    "rich.live",
    "caliper.report.run_view",  # the final report
    "caliper.results.gate",  # no --min-score/--min-activation given
    "caliper.results.scoring",
    "caliper.runner.adaptive",  # no --k auto
    "caliper.runner.shard",  # no --shard
    "difflib",  # no mistyped name to suggest a close one for
    "secrets",  # the ledger's and sandboxes' random names come from os.urandom
)

NOT_IN_A_RUN_WITHOUT_BARS = (
    "caliper.results.gate",  # the report's spend section writes measures without the gate
    "difflib",
    "secrets",
)
"""Modules a run with no --min-score/--max-cost bar and no mistake never needs, to its end."""


def test_the_first_agent_starts_before_the_journal_and_display(tmp_path: Path) -> None:
    space = Workspace.create(tmp_path)
    space.skill("shout")
    spec = space.spec(
        "skills: [./skills/shout]\ntasks:\n  - name: a\n    prompt: hi\n    activates: [shout]\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", SPAWN_PROBE, str(CALIPER), "run", str(spec), "--model", "fake"],
        cwd=tmp_path,
        env=space.env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    seen = json.loads((tmp_path / "at-first-spawn.json").read_text())
    loaded = set(seen["modules"])
    # the probe saw a real start: the backend and the attempt pipeline were there
    assert {"caliper.runner.attempt.pipeline", "caliper_fakeagent.plugin"} <= loaded
    early = sorted(
        m
        for m in loaded
        if any(m == x or m.startswith(x + ".") for x in NOT_BEFORE_THE_FIRST_AGENT)
    )
    assert early == []
    assert seen["journals"] == []  # the run id is claimed once the first agents are out
    # the cycle collector is off until then, and on (start-up's objects frozen) afterwards
    assert seen["collector"] is False
    assert "AT EXIT True True" in done.stdout
    at_exit = set(json.loads((tmp_path / "at-exit.json").read_text()))
    assert "caliper.report.spend_view" in at_exit  # the end report was drawn
    assert sorted(at_exit & set(NOT_IN_A_RUN_WITHOUT_BARS)) == []
    # and the run still ended as usual, its results saved from the journal
    saved = space.latest_results()
    assert saved is not None
    assert len(json.loads(saved.read_text())["tasks"][0]["attempts"]) == 3
